import { loadConfig, type CoreConfig } from "@invoicing/core/config";
import type { Deps } from "@invoicing/core/deps";
import { createDb } from "@invoicing/core/db/dynamodb";
import { DEFAULT_API_RATE_LIMIT, DEFAULT_PUBLIC_RATE_LIMIT } from "@invoicing/core/limits/rate-limit";

/**
 * A capability a function may carry besides the table and the clock: one module of this folder
 * each (the card processor, the email outbox, the event bus, the Peppol provider, …). A Lambda entry
 * point imports only the ones its work uses, so an SDK none of that function's work needs is not in
 * its bundle (npm run bench lists every function's bundle).
 */
export type Capability = (config: CoreConfig, env: NodeJS.ProcessEnv) => Partial<Deps>;

/**
 * A function's dependencies, built once per Lambda container (or local process): the table, the
 * clock, links and limits from the environment, plus what each capability given adds.
 */
export function createDeps(env: NodeJS.ProcessEnv = process.env, capabilities: readonly Capability[] = []): Deps {
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
