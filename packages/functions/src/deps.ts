import type { Deps } from "@invoicing/core/context";
import { createBaseDeps } from "./capabilities/base";
import { cardProcessor } from "./capabilities/card-processor";
import { emailOutbox } from "./capabilities/email-outbox";

/**
 * Every capability at once: what the local server, the jobs and the tests run with. The Lambda
 * entry points of the HTTP functions (api.ts, documents-api.ts, payments-api.ts) pick only theirs
 * from capabilities/, so each bundle carries only the SDKs its routes use.
 */
export function createDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  return createBaseDeps(env, [emailOutbox, cardProcessor]);
}
