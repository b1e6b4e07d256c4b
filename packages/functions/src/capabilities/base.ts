import { loadConfig, type CoreConfig } from "@invoicing/core/config";
import type { Deps } from "@invoicing/core/context";
import { createDb } from "@invoicing/core/db/client";

/**
 * A capability a function may carry besides the table and the clock: the card processor (and, in
 * delivery-deps.ts, what delivers). Each lives in its own module, and a Lambda entry point imports only the ones
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
  };
  for (const capability of capabilities) Object.assign(deps, capability(config, env));
  return deps;
}
