import { loadConfig } from "@invoicing/core/config";
import type { Deps } from "@invoicing/core/context";
import { createDb } from "@invoicing/core/db/client";

/** Production dependencies, built once per Lambda container (or local process). */
export function createDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  const config = loadConfig(env);
  return {
    db: createDb(config),
    clock: () => new Date(),
    publicBaseUrl: config.publicBaseUrl,
  };
}
