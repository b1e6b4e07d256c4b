import { cardProcessor } from "./card-processor";
import type { Capability } from "./create-deps";
import { emailOutbox } from "./email-outbox";
import { eventBus } from "./event-bus";
import { pdfAttachments } from "./pdf-attachments";
import { peppolHandOver } from "./peppol-hand-over";

/**
 * Every capability at once: what the local server and `npm run jobs` run with (all jobs, the
 * workers and the stream subscriber in one process): `createDeps(env, ALL_CAPABILITIES)`. A Lambda
 * entry point takes only the capabilities its work uses (lambda/stream.ts, lambda/workers/*), so
 * each bundle carries only those SDKs; none imports this module.
 */
export const ALL_CAPABILITIES: readonly Capability[] = [
  cardProcessor,
  emailOutbox,
  eventBus,
  pdfAttachments,
  peppolHandOver,
];
