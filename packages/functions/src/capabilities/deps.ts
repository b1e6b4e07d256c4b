import type { Deps } from "@invoicing/core/context";
import { createBaseDeps } from "./base";
import { cardProcessor } from "./card-processor";
import { peppolProvider } from "./peppol";

/**
 * Production dependencies, built once per Lambda container (or local process). What requests need
 * only: email delivery and the event bus belong to the stream subscriber and the jobs
 * (email.ts, event-bus.ts), so the API function's bundle carries neither SES nor EventBridge. The HTTP
 * functions' entry points (lambda/api.ts, lambda/documents.ts, lambda/payments.ts) pick their capabilities from
 * capabilities/ themselves, so each bundle carries only the SDKs its routes use.
 */
export function createDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  return createBaseDeps(env, [cardProcessor, peppolProvider]);
}
