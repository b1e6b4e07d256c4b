import { errorFields, log } from "../observability/context-log";

/**
 * Fair scheduling of webhook attempts (docs/events.md, "Fairness"): what the stream subscriber and
 * the `webhooks` job both use to make a set of attempts, so that one user's dead receivers cannot
 * take the capacity everyone shares.
 *
 * - Users take turns (round robin), and each user's endpoints take turns within the user.
 * - At most `perUser` attempts of one user and `perEndpoint` of one endpoint are in flight at once,
 *   `total` in all: a user with ten receivers that never answer holds at most `perUser` of the
 *   `total` slots, each for one timeout, and everyone else keeps the rest.
 * - After a failed attempt (or one another worker's attempt of the endpoint kept from starting:
 *   `busy`) an endpoint takes no more work in this run: its other attempts stay due
 *   for the next run, so a dead receiver costs one timeout per endpoint per run, not one per event.
 * - Nothing new starts once `takeUntil` (epoch ms, wall clock) has passed: what was not started
 *   stays due, and the caller learns how many (`deferred`).
 * Attempts of one endpoint start in the order given (with `perEndpoint` 1, one after the other).
 */
export interface FairLimits {
  total: number;
  perUser: number;
  perEndpoint: number;
}

/**
 * `failed`: the receiver failed (it stops the endpoint for the run); `dropped`: failed for good
 * without asking the receiver (the endpoint deleted or disabled, the event expired), which says
 * nothing of the receiver, so the endpoint's other attempts go on (a disabled endpoint's backlog
 * drains in one run); `skipped`: another attempter had it; `busy`: another worker has an attempt of
 * this endpoint in flight (./lease.ts), so the endpoint takes no more work in this run either: its
 * attempts stay due for the next one.
 */
export type AttemptResult = "succeeded" | "failed" | "dropped" | "skipped" | "busy";

interface EndpointQueue<T> {
  items: T[];
  inFlight: number;
  stopped: boolean;
}

interface UserQueue<T> {
  endpoints: EndpointQueue<T>[];
  next: number;
  inFlight: number;
}

export async function attemptFairly<T extends { userId: string; endpointId: number }>(
  items: readonly T[],
  limits: FairLimits,
  work: (item: T) => Promise<AttemptResult>,
  options: { takeUntil?: number } = {},
): Promise<{ deferred: number }> {
  const users = new Map<string, UserQueue<T>>();
  const endpoints = new Map<string, EndpointQueue<T>>();
  for (const item of items) {
    const key = `${item.userId}#${item.endpointId}`;
    let endpoint = endpoints.get(key);
    if (!endpoint) {
      endpoint = { items: [], inFlight: 0, stopped: false };
      endpoints.set(key, endpoint);
      let user = users.get(item.userId);
      if (!user) users.set(item.userId, (user = { endpoints: [], next: 0, inFlight: 0 }));
      user.endpoints.push(endpoint);
    }
    endpoint.items.push(item);
  }
  const order = [...users.values()];
  let turn = 0;
  let running = 0;

  /** The next attempt that may start now, taking users and their endpoints in turn. */
  const take = (): { user: UserQueue<T>; endpoint: EndpointQueue<T>; item: T } | undefined => {
    for (let u = 0; u < order.length; u++) {
      const user = order[(turn + u) % order.length]!;
      if (user.inFlight >= limits.perUser) continue;
      for (let e = 0; e < user.endpoints.length; e++) {
        const index = (user.next + e) % user.endpoints.length;
        const endpoint = user.endpoints[index]!;
        if (endpoint.stopped || endpoint.inFlight >= limits.perEndpoint || endpoint.items.length === 0) continue;
        user.next = (index + 1) % user.endpoints.length;
        turn = (turn + u + 1) % order.length;
        return { user, endpoint, item: endpoint.items.shift()! };
      }
    }
    return undefined;
  };

  await new Promise<void>((resolve) => {
    const pump = () => {
      while (running < limits.total && (options.takeUntil === undefined || Date.now() < options.takeUntil)) {
        const next = take();
        if (!next) break;
        running++;
        next.user.inFlight++;
        next.endpoint.inFlight++;
        void work(next.item)
          .then(
            (result) => {
              if (result === "failed" || result === "busy") next.endpoint.stopped = true;
            },
            (error: unknown) => log("warn", "webhook attempt failed to run", errorFields(error)),
          )
          .finally(() => {
            running--;
            next.user.inFlight--;
            next.endpoint.inFlight--;
            pump();
          });
      }
      if (running === 0) resolve();
    };
    pump();
  });
  let deferred = 0;
  for (const endpoint of endpoints.values()) deferred += endpoint.items.length;
  return { deferred };
}
