import { AsyncLocalStorage } from "node:async_hooks";

/**
 * One deadline per invocation, which every DynamoDB call respects (docs/reliability.md, "Deadlines").
 * Each SDK call is bounded on its own (db/dynamodb.ts: 4 attempts × 3 s plus backoff), but a request
 * that makes a card processor call and then two slow table calls can still outlast its Lambda: the
 * function is killed, the caller gets API Gateway's bare 503 and nothing is logged. So each Lambda
 * entry point runs its work under the invocation's deadline (the Lambda's remaining time less a
 * margin to answer; packages/functions/src/lambda/deadline.ts), and createDb() passes its abort
 * signal to every call: past the deadline, a call in flight or in its retry backoff stops with an
 * AbortError, which db/errors.ts counts as "unavailable" (503 with Retry-After, a failed stream
 * record retried later).
 */
const current = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` with its DynamoDB calls bounded by `deadline` (epoch ms); undefined: no bound. */
export async function withDeadline<T>(deadline: number | undefined, work: () => Promise<T>): Promise<T> {
  if (deadline === undefined) return work();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - Date.now()));
  try {
    return await current.run(controller.signal, work);
  } finally {
    clearTimeout(timer);
  }
}

/** The abort signal of the running invocation's deadline, if any. */
export const deadlineSignal = (): AbortSignal | undefined => current.getStore();
