import { DEFAULT_API_RATE_LIMIT } from "@invoicing/core/limits/rate-limit";
import { setUserLimits } from "@invoicing/core/limits/user-limits";
import type { Deps } from "@invoicing/core/deps";
import { SCALE } from "./sim";

/**
 * How the noisy user's limit is set and what it is, in the API latency part (./api-latency.ts): main
 * before per-user limits had none, so the figure is a stated assumption there; with per-user limits
 * it is the limit the simulation gives the user. Named, so a worker thread can pick the same one.
 */
export interface Limits {
  name: "none" | "user";
  describe: string;
  /** The noisy user's request limit, per second. */
  perSecond: number;
  /** What the service's dependencies carry for limits (the stage's configuration). */
  deps: Partial<Deps>;
  /** Gives `userId` that limit (a no-op where there are no limits). */
  apply(deps: Deps, userId: string, perSecond: number): Promise<void>;
}

/** The noisy user's limit: the default scaled down as the API's concurrency is (sim.ts). */
const NOISY_LIMIT = DEFAULT_API_RATE_LIMIT / SCALE.apiDivisor;

export const noLimits: Limits = {
  name: "none",
  describe: `no per-user limit (main before wave4/limits); the noisy user's 'limit' is an assumed ${NOISY_LIMIT} requests/s`,
  perSecond: NOISY_LIMIT,
  deps: {},
  apply: async () => {},
};

/**
 * Per-user request limits (limits/rate-limit.ts): the stage's defaults (50/s, public links 10/s), and
 * the noisy user given its own limit, as an operator would with `npm run users -- limits`.
 */
export const userLimits: Limits = {
  name: "user",
  describe: `per-user limits (limits/rate-limit.ts): defaults ${DEFAULT_API_RATE_LIMIT}/s; the noisy user's own limit set to ${NOISY_LIMIT}/s`,
  perSecond: NOISY_LIMIT,
  deps: { rateLimits: { requestsPerSecond: DEFAULT_API_RATE_LIMIT, publicPerSecond: 10 } },
  apply: async (deps, userId, perSecond) => {
    await setUserLimits(deps, userId, { requestsPerSecond: perSecond });
  },
};

export const limitsNamed = (name: Limits["name"]): Limits => (name === "none" ? noLimits : userLimits);
