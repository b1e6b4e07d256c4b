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
 * counts and errors (name, and message and stack redacted: errorFields).
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

/** An error's name alone (for a metric dimension or a short summary). */
export const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

/**
 * What a log line says of an error: its name, message and stack, so an operator can find the cause
 * from the log alone. A message may quote what it was given (an address, a key, a token in a URL),
 * so both are passed through redact() first; the stack is cut to its first frames.
 */
export function errorFields(error: unknown): { error: string; errorMessage?: string; stack?: string } {
  if (!(error instanceof Error)) return { error: typeof error };
  const stack = error.stack?.split("\n").slice(0, STACK_LINES).join("\n");
  return {
    error: error.name,
    errorMessage: redact(error.message),
    ...(stack ? { stack: redact(stack) } : {}),
  };
}

const STACK_LINES = 12;

/**
 * Secrets and personal data that can turn up in an error's text, replaced by what they were: email
 * addresses, the app's API keys (inv_…), card processor keys and webhook secrets (sk_…, rk_…,
 * whsec_…), bearer tokens, and any long opaque token (public page tokens, signatures).
 */
const REDACTIONS: [RegExp, string][] = [
  // Not a stack frame's node_modules/@scope/…: an address's local part and domain have no "/".
  [/[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g, "<email>"],
  [/\binv_[A-Za-z0-9_-]+/g, "<api-key>"],
  [/\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]+/g, "<processor-key>"],
  [/\bwhsec_[A-Za-z0-9+/=]+/g, "<webhook-secret>"],
  [/\b[Bb]earer\s+[^\s),;]+/g, "Bearer <redacted>"],
  // Long and with a digit: a random token, not a function name such as processTicksAndRejections.
  [/\b(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{24,}\b/g, "<token>"],
];

export function redact(text: string): string {
  return REDACTIONS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text);
}
