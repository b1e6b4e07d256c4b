import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The app's log line: one JSON object per line, with the request id and user id of whatever is
 * running (an API request, a job run, a stream batch) on every line, without passing them around.
 * The entry points open the scope (`withLogContext`: the API's middleware, the Lambda handlers); the
 * auth middleware adds the user once the key is checked (`setLogUser`). Code anywhere then calls
 * `log(...)`.
 *
 * Written by hand, not Powertools' Logger, for the API function's cold start: AsyncLocalStorage is
 * Node's own, and these lines cost nothing in the bundle (docs/operations.md, "Logs and metrics",
 * has the measured cost of Powertools). Fields never carry secrets, addresses or contents: ids,
 * counts and error names.
 */
interface LogContext {
  requestId?: string;
  userId?: string;
  /** The Lambda invocation's id, when it differs from the request id (API Gateway's). */
  awsRequestId?: string;
  /** What is running: "api", "stream", a job's name. */
  source?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

export function withLogContext<T>(context: LogContext, run: () => T): T {
  return storage.run({ ...storage.getStore(), ...context }, run);
}

/** The user the running request acts for, once its key is verified. */
export function setLogUser(userId: string): void {
  const context = storage.getStore();
  if (context) context.userId = userId;
}

export function logContext(): LogContext {
  return storage.getStore() ?? {};
}

type LogLevel = "debug" | "info" | "warn" | "error";

export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({
    level,
    message,
    timestamp: new Date().toISOString(),
    ...logContext(),
    ...fields,
  });
  if (level === "error" || level === "warn") console.warn(line);
  else console.log(line);
}

/** An error as a log field: its name only (a message may quote the input, an address, a key). */
export const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);
