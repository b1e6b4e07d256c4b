import type { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { log } from "../observability/context-log";
import { METRIC } from "../observability/metric-names";
import { countMetric } from "../observability/metrics";
import type { Event } from "./resource";

/**
 * The app's EventBridge bus (deployed): every event is also put there, `source` "invoicing",
 * `detail-type` the event type, `detail` the event, for consumers inside AWS. The SDK loads at the
 * first publish, so only the stream subscriber's bundle evaluates it.
 *
 * The bus takes at most 256 KB per entry and per PutEvents call (docs/events.md). An event whose
 * detail would be larger than MAX_DETAIL_BYTES (an invoice of 100 long lines) is put as a reference:
 * the event with `data: null` and `dataOmitted: true`; the consumer reads the resource from the API.
 * An entry the bus refuses as invalid (InvalidArgument, MalformedDetail, or the whole call refused
 * as a bad request) is logged and skipped: retrying it would fail the same way and hold back the
 * stream shard behind it for a day. Throttling, internal failures and refused permissions (which a
 * deploy fixes) fail the publish, so the stream record is retried.
 */
const BUS_SOURCE = "invoicing";
/** EventBridge's limit for an entry and for a whole PutEvents call. */
const MAX_ENTRY_BYTES = 256 * 1024;
/** The largest detail sent whole: the rest of the entry (source, type, bus name, time) fits beside it. */
export const MAX_DETAIL_BYTES = 240 * 1024;
const INVALID_ENTRY_CODES = new Set(["InvalidArgument", "MalformedDetail"]);

interface EventBus {
  publish(events: readonly Event[]): Promise<void>;
}

/** The detail put on the bus: the event, or past MAX_DETAIL_BYTES a reference to it. */
function busDetail(event: Event): string {
  const whole = JSON.stringify(event);
  if (Buffer.byteLength(whole) <= MAX_DETAIL_BYTES) return whole;
  return JSON.stringify({ ...event, data: null, dataOmitted: true });
}

function putEventsEntries(busName: string, events: readonly Event[]) {
  return events.map((event) => ({
    EventBusName: busName,
    Source: BUS_SOURCE,
    DetailType: event.type,
    Detail: busDetail(event),
    Time: new Date(event.createdAt),
  }));
}

type Entry = ReturnType<typeof putEventsEntries>[number];

/** An entry's size as EventBridge counts it (UTF-8 bytes of its strings, 14 for the time). */
const entryBytes = (entry: Entry): number =>
  14 + Buffer.byteLength(entry.Source) + Buffer.byteLength(entry.DetailType) + Buffer.byteLength(entry.Detail);

/** Calls of at most 10 entries and MAX_ENTRY_BYTES together. */
function calls(entries: readonly Entry[]): Entry[][] {
  const out: Entry[][] = [];
  let current: Entry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entryBytes(entry);
    if (current.length > 0 && (current.length === 10 || bytes + size > MAX_ENTRY_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** Counted as StreamRecordsSkipped (an alarm, infra/alarms.ts): the event is stored, but not on the bus. */
const skipped = (entry: Entry, why: string) => {
  // The event's id and type only: its data is the user's.
  log("warn", "event refused by the bus as invalid; skipped", {
    eventId: (JSON.parse(entry.Detail) as { id?: string }).id,
    type: entry.DetailType,
    why,
  });
  countMetric(METRIC.streamRecordsSkipped);
};

/** A whole call refused as a bad request (4xx other than throttling): no retry can pass it. */
const isInvalidRequest = (error: unknown): boolean => {
  const e = error as { $metadata?: { httpStatusCode?: number }; name?: string; $retryable?: unknown };
  const status = e?.$metadata?.httpStatusCode;
  return (
    status !== undefined &&
    status >= 400 &&
    status < 500 &&
    status !== 429 &&
    !/Throttl|AccessDenied|NotAuthorized|UnrecognizedClient|ExpiredToken|InvalidSignature/.test(e.name ?? "")
  );
};

/** Per attempt, connection to response (ms): PutEvents answers in tens of milliseconds. */
export const EVENTBRIDGE_TIMEOUT_MS = 3_000;

export function createEventBridgeBus(busName: string, region: string, endpoint?: string): EventBus {
  let client: Promise<{ client: EventBridgeClient; sdk: typeof import("@aws-sdk/client-eventbridge") }> | undefined;
  const open = () =>
    (client ??= import("@aws-sdk/client-eventbridge").then((sdk) => ({
      sdk,
      // Bounded like the table's calls (db/dynamodb.ts): a lost answer fails the record (retried
      // by the stream) instead of holding the subscriber until its timeout.
      client: new sdk.EventBridgeClient({
        region,
        endpoint,
        maxAttempts: 3,
        requestHandler: {
          requestTimeout: EVENTBRIDGE_TIMEOUT_MS,
          connectionTimeout: 1_000,
          throwOnRequestTimeout: true,
        },
      }),
    })));
  return {
    async publish(events) {
      if (events.length === 0) return;
      const { client, sdk } = await open();
      for (const entries of calls(putEventsEntries(busName, events))) {
        let out;
        try {
          out = await client.send(new sdk.PutEventsCommand({ Entries: entries }));
        } catch (error) {
          if (!isInvalidRequest(error)) throw error;
          for (const entry of entries) skipped(entry, (error as Error).name);
          continue;
        }
        // PutEvents reports failed entries without throwing, each with its code.
        if (!out.FailedEntryCount) continue;
        let retryable = 0;
        for (const [i, result] of (out.Entries ?? []).entries()) {
          if (!result.ErrorCode) continue;
          if (INVALID_ENTRY_CODES.has(result.ErrorCode)) skipped(entries[i]!, result.ErrorCode);
          else retryable++;
        }
        if (retryable > 0) throw new Error(`EventBridge refused ${retryable} event(s)`);
      }
    },
  };
}
