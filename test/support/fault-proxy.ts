import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A small HTTP proxy in front of DynamoDB Local that misbehaves on purpose. DynamoDB Local never
 * throttles, fails or loses a response, real DynamoDB does: point a client at `proxy.url` and
 * `inject()` faults for the requests that match (by X-Amz-Target, e.g.
 * `DynamoDB_20120810.TransactWriteItems`, and the parsed request body). Everything else is
 * forwarded untouched, so the app still runs against the real emulator — no SDK mock.
 *
 * Faults:
 * - `throttle`, `provisioned`: 400 ThrottlingException / ProvisionedThroughputExceededException
 *   (the request never reaches the table);
 * - `server-error`: 500 InternalServerError (never reaches the table);
 * - `conflict`: 400 TransactionCanceledException with a TransactionConflict reason (never reaches it);
 * - `timeout-after-write`: forwarded, DynamoDB applies it, the response is withheld until the client
 *   gives up (its request timeout) — the "did my write happen?" case;
 * - `reset-after-write`: forwarded and applied, then the connection is cut before the response.
 * - `empty-page`: for DynamoDB Streams' GetRecords (`DynamoDBStreams_20120810.GetRecords`), a page
 *   with no records and a next iterator that reads on from the same place: what AWS may answer on
 *   an open shard even when records follow.
 */
export type FaultKind =
  | "throttle"
  | "provisioned"
  | "server-error"
  | "conflict"
  | "timeout-after-write"
  | "reset-after-write"
  | "empty-page";

/** The DynamoDB faults (not empty-page, which is a Streams answer). */
export const FAULT_KINDS: readonly FaultKind[] = [
  "throttle",
  "provisioned",
  "server-error",
  "conflict",
  "timeout-after-write",
  "reset-after-write",
];

/** The DynamoDB operation (`TransactWriteItems`, `PutItem`, …) and its JSON body (wire format). */
// DynamoDB wire JSON of every shape
export type RequestMatcher = (operation: string, body: any) => boolean;

export interface FaultRule {
  match: RequestMatcher;
  /** The fault, or a function choosing one (or none) per matching request. */
  fault: FaultKind | ((operation: string, body: unknown) => FaultKind | undefined);
  /** How many matching requests get the fault (default 1; Infinity until removed). */
  times?: number;
}

export interface InjectedFault {
  /** How many requests this rule has hit so far. */
  readonly hits: number;
  remove(): void;
}

export interface ProxiedRequest {
  operation: string;
  fault?: FaultKind;
}

export interface FaultProxy {
  url: string;
  /** Every request seen, in order, with the fault it got. */
  log: ProxiedRequest[];
  inject(rule: FaultRule): InjectedFault;
  /** Removes every rule: from now on everything is forwarded untouched. */
  clear(): void;
  close(): Promise<void>;
}

/** Matches one operation, optionally only when the body names an item whose sort key starts so. */
export const op =
  (operation: string, skPrefix?: string): RequestMatcher =>
  (actual, body) =>
    actual === operation && (skPrefix === undefined || sortKeys(body).some((sk) => sk.startsWith(skPrefix)));

export const anyWrite: RequestMatcher = (operation) =>
  ["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"].includes(operation);

export const anyRequest: RequestMatcher = () => true;

/** Every `sk` the request names (keys and items, in transactions too), for matching by record kind. */
export function sortKeys(body: unknown): string[] {
  const found: string[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") {
      for (const [name, inner] of Object.entries(value)) {
        if (name === "sk" && inner && typeof inner === "object" && typeof (inner as { S?: unknown }).S === "string") {
          found.push((inner as { S: string }).S);
        } else walk(inner);
      }
    }
  };
  walk(body);
  return found;
}

interface Rule {
  match: RequestMatcher;
  fault: FaultRule["fault"];
  left: number;
  hits: number;
}

/**
 * What the bench's scale simulation (bench/scale/aws-like-dynamo.ts) adds on top: a latency for each
 * forwarded request (AWS's) and a look at each answer DynamoDB gave (what it read, for throughput
 * accounting). Tests use neither.
 */
export interface FaultProxyOptions {
  /**
   * Milliseconds after its arrival before a forwarded request is answered, at the earliest (not for
   * faulted ones). It is forwarded at once and its answer held for what is left: the emulator's own
   * time is part of the latency, as DynamoDB's is of AWS's, rather than added to it.
   */
  latencyMs?: (operation: string, body: unknown) => number;
  /** The DynamoDB Local a request goes to when there are several (by its table); else `upstream`. */
  upstreamFor?: (body: unknown) => string | undefined;
  /** Called with every forwarded request's answer from DynamoDB. */
  observe?: (operation: string, body: unknown, status: number, response: Buffer) => void;
}

export async function startFaultProxy(upstream: string, options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const defaultTarget = new URL(upstream);
  let rules: Rule[] = [];
  const log: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const operation = operationOf(req);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = undefined;
      }
      const fault = pickFault(operation, body);
      log.push({ operation, fault });
      void handle(req, res, raw, body, fault).catch(() => res.destroy());
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  function pickFault(operation: string, body: unknown): FaultKind | undefined {
    for (const rule of rules) {
      if (rule.left <= 0 || !rule.match(operation, body)) continue;
      const fault = typeof rule.fault === "function" ? rule.fault(operation, body) : rule.fault;
      if (!fault) continue;
      rule.left--;
      rule.hits++;
      return fault;
    }
    return undefined;
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    raw: Buffer,
    body: unknown,
    fault: FaultKind | undefined,
  ) {
    switch (fault) {
      case "throttle":
        return awsError(res, 400, "ThrottlingException", "Rate of requests exceeds the allowed throughput.");
      case "provisioned":
        return awsError(
          res,
          400,
          "ProvisionedThroughputExceededException",
          "The level of configured provisioned throughput for the table was exceeded.",
        );
      case "server-error":
        return awsError(res, 500, "InternalServerError", "Internal server error");
      case "conflict": {
        // One reason per item, as DynamoDB answers: the first conflicted, the rest were not evaluated.
        const count = Math.max(1, (body as { TransactItems?: unknown[] } | undefined)?.TransactItems?.length ?? 1);
        const reasons = Array.from({ length: count }, (_, i) =>
          i === 0 ? { Code: "TransactionConflict", Message: "Transaction is ongoing for the item" } : { Code: "None" },
        );
        return awsError(
          res,
          400,
          "TransactionCanceledException",
          `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(", ")}]`,
          { CancellationReasons: reasons },
        );
      }
      case "timeout-after-write":
        await forward(req, raw, body);
        return; // never answer: the client's request timeout fires and it gives up on this socket
      case "reset-after-write":
        await forward(req, raw, body);
        req.socket.destroy();
        return;
      case "empty-page": {
        const iterator = (body as { ShardIterator?: string } | undefined)?.ShardIterator;
        res.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
        res.end(JSON.stringify({ Records: [], NextShardIterator: iterator }));
        return;
      }
      default: {
        const answerAt = performance.now() + (options.latencyMs?.(operationOf(req), body) ?? 0);
        const upstreamRes = await forward(req, raw, body);
        const left = answerAt - performance.now();
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
        options.observe?.(operationOf(req), body, upstreamRes.status, upstreamRes.body);
        res.writeHead(upstreamRes.status, upstreamRes.headers);
        res.end(upstreamRes.body);
      }
    }
  }

  function forward(
    req: IncomingMessage,
    raw: Buffer,
    body: unknown,
  ): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
    const chosen = options.upstreamFor?.(body);
    const target = chosen ? new URL(chosen) : defaultTarget;
    return new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: target.host };
      const out = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (upstreamRes) => {
          const chunks: Buffer[] = [];
          upstreamRes.on("data", (chunk: Buffer) => chunks.push(chunk));
          upstreamRes.on("end", () => {
            const responseHeaders: Record<string, string | string[]> = {};
            for (const [name, value] of Object.entries(upstreamRes.headers))
              if (value !== undefined) responseHeaders[name] = value;
            resolve({ status: upstreamRes.statusCode ?? 502, headers: responseHeaders, body: Buffer.concat(chunks) });
          });
          upstreamRes.on("error", reject);
        },
      );
      out.on("error", reject);
      out.end(raw);
    });
  }

  return {
    url: `http://127.0.0.1:${port}`,
    log,
    inject(rule) {
      const entry: Rule = { match: rule.match, fault: rule.fault, left: rule.times ?? 1, hits: 0 };
      rules.push(entry);
      return {
        get hits() {
          return entry.hits;
        },
        remove: () => {
          rules = rules.filter((r) => r !== entry);
        },
      };
    },
    clear() {
      rules = [];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The DynamoDB operation a request names (`GetItem`, `TransactWriteItems`, …), from X-Amz-Target. */
function operationOf(req: IncomingMessage): string {
  return (
    String(req.headers["x-amz-target"] ?? "")
      .split(".")
      .pop() ?? ""
  );
}

/** An error as DynamoDB's JSON protocol sends it: the SDK names the exception from `__type`. */
function awsError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  const body = JSON.stringify({
    __type: `com.amazonaws.dynamodb.v20120810#${type}`,
    message,
    Message: message,
    ...extra,
  });
  res.writeHead(status, {
    "Content-Type": "application/x-amz-json-1.0",
    "Content-Length": Buffer.byteLength(body),
    "x-amzn-RequestId": `fault-${Math.random().toString(36).slice(2)}`,
  });
  res.end(body);
}
