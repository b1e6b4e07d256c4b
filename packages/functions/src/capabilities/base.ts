import { loadConfig, type CoreConfig } from "@invoicing/core/config";
import type { Deps } from "@invoicing/core/context";
import { createDb } from "@invoicing/core/db/dynamodb";
import { DEFAULT_API_RATE_LIMIT, DEFAULT_PUBLIC_RATE_LIMIT } from "@invoicing/core/limits/rate-limit";

/**
 * A capability a function may carry besides the table and the clock: the card processor (and, in
 * email.ts, event-bus.ts and document-deps.ts, what delivers). Each lives in its own module, and a Lambda entry point imports only the ones
 * its routes use, so an SDK no route of that function needs is not in its bundle (npm run bench
 * lists every function's bundle).
 */
export type Capability = (config: CoreConfig, env: NodeJS.ProcessEnv) => Partial<Deps>;

/** Production dependencies, built once per Lambda container (or local process): the table, the clock, links. */
export function createBaseDeps(env: NodeJS.ProcessEnv = process.env, capabilities: readonly Capability[] = []): Deps {
  const config = loadConfig(env);
  const deps: Deps = {
    db: createDb(config),
    clock: () => new Date(),
    // Locally, with no base URL configured, email links point at the local server.
    publicBaseUrl: config.publicBaseUrl ?? (config.emailSender ? undefined : `http://localhost:${env.PORT || 3000}`),
    webhookPolicy: { allowPrivate: config.webhooksAllowPrivate },
    trustProxy: env.TRUST_PROXY === "1" || env.TRUST_PROXY === "true",
    emailDailyQuota: positiveInteger("EMAIL_DAILY_QUOTA", env.EMAIL_DAILY_QUOTA),
    rateLimits: {
      requestsPerSecond: positiveInteger("API_RATE_LIMIT", env.API_RATE_LIMIT) ?? DEFAULT_API_RATE_LIMIT,
      publicPerSecond: positiveInteger("PUBLIC_RATE_LIMIT", env.PUBLIC_RATE_LIMIT) ?? DEFAULT_PUBLIC_RATE_LIMIT,
    },
    // The pay link on send needs to know only that a processor is configured, not the processor.
    cardPayments: config.cardPaymentsEnabled,
  };
  for (const capability of capabilities) Object.assign(deps, capability(config, env));
  return deps;
}

/**
 * EMAIL_DAILY_QUOTA, API_RATE_LIMIT, PUBLIC_RATE_LIMIT: a positive integer; unset means the default
 * (core/src/email/quota.ts, core/src/limits/user-limits.ts).
 */
function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}
