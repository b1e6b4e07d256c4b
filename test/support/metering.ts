import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/**
 * Counts what DynamoDB is asked to do: calls per command, items read, and consumed capacity (it
 * asks DynamoDB to return it). Instrumentation for the benchmarks and for tests that prove a job
 * reads only what is due; the requests themselves go to DynamoDB unchanged.
 */
export interface Meter {
  calls: number;
  /**
   * Sequential round trips: calls that started while no other was in flight. Calls sent together
   * (a Query alongside a GetItem) count once: the latency a caller waits is this many trips.
   */
  roundTrips: number;
  byCommand: Record<string, number>;
  itemsRead: number;
  capacityUnits: number;
  /** capacityUnits split by kind: on-demand tables bill read and write request units apart. */
  readUnits: number;
  writeUnits: number;
  reset(): void;
  detach(): void;
}

const CAPACITY_COMMANDS = new Set([
  "GetItemCommand",
  "PutItemCommand",
  "UpdateItemCommand",
  "DeleteItemCommand",
  "QueryCommand",
  "ScanCommand",
  "BatchGetItemCommand",
  "BatchWriteItemCommand",
  "TransactGetItemsCommand",
  "TransactWriteItemsCommand",
]);

interface CapacityLike {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

const READ_COMMANDS = new Set([
  "GetItemCommand",
  "QueryCommand",
  "ScanCommand",
  "BatchGetItemCommand",
  "TransactGetItemsCommand",
]);

export function attachMeter(doc: DynamoDBDocumentClient, name = `meter-${Math.random().toString(36).slice(2)}`): Meter {
  let inFlight = 0;
  const meter: Meter = {
    calls: 0,
    roundTrips: 0,
    byCommand: {},
    itemsRead: 0,
    capacityUnits: 0,
    readUnits: 0,
    writeUnits: 0,
    reset() {
      this.calls = 0;
      this.roundTrips = 0;
      this.byCommand = {};
      this.itemsRead = 0;
      this.capacityUnits = 0;
      this.readUnits = 0;
      this.writeUnits = 0;
    },
    detach() {
      doc.middlewareStack.remove(name);
    },
  };
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? "unknown";
      const input = args.input as Record<string, unknown>;
      if (CAPACITY_COMMANDS.has(command)) input.ReturnConsumedCapacity ??= "TOTAL";
      meter.calls++;
      if (inFlight === 0) meter.roundTrips++;
      meter.byCommand[command] = (meter.byCommand[command] ?? 0) + 1;
      inFlight++;
      let result;
      try {
        result = await next(args);
      } finally {
        inFlight--;
      }
      const output = result.output as Record<string, unknown>;
      meter.itemsRead += itemsRead(command, output);
      const consumed = output.ConsumedCapacity as CapacityLike | CapacityLike[] | undefined;
      for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
        const units = c.CapacityUnits ?? 0;
        meter.capacityUnits += units;
        // DynamoDB names the kind when it can; otherwise the command's kind decides.
        if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
          meter.readUnits += c.ReadCapacityUnits ?? 0;
          meter.writeUnits += c.WriteCapacityUnits ?? 0;
        } else if (READ_COMMANDS.has(command)) meter.readUnits += units;
        else meter.writeUnits += units;
      }
      return result;
    },
    { step: "initialize", name, override: true },
  );
  return meter;
}

function itemsRead(command: string, output: Record<string, unknown>): number {
  if (command === "QueryCommand" || command === "ScanCommand") return Number(output.ScannedCount ?? 0);
  if (command === "GetItemCommand") return output.Item ? 1 : 0;
  if (command === "BatchGetItemCommand" || command === "TransactGetItemsCommand") {
    const responses = output.Responses as Record<string, unknown[]> | unknown[] | undefined;
    if (Array.isArray(responses)) return responses.length;
    return Object.values(responses ?? {}).reduce((n, items) => n + items.length, 0);
  }
  return 0;
}
