import type { Deps } from "@invoicing/core/context";
import { createBaseDeps } from "./base";
import { cardProcessor } from "./card-processor";
import { documentRenderer } from "./document-deps";
import { emailOutbox } from "./email";
import { eventBus } from "./event-bus";
import { peppolHandOver } from "./peppol-hand-over";

/**
 * Every capability at once: what the local server and `npm run jobs` run with (all jobs and the
 * stream subscriber in one process). A Lambda entry point takes only the capabilities its work
 * uses (lambda/stream.ts, lambda/jobs/*), so each bundle carries only those SDKs.
 */
export function createDeliveryDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  return createBaseDeps(env, [cardProcessor, emailOutbox, eventBus, documentRenderer, peppolHandOver]);
}
