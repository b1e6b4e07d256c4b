import { join, resolve } from "node:path";
import { loadConfig, type CoreConfig } from "@invoicing/core/config";
import type { Deps } from "@invoicing/core/context";
import { FileTransport } from "@invoicing/core/email/file-transport";
import { emailSender } from "@invoicing/core/email/sender";
import { SesTransport, createSesClient } from "@invoicing/core/email/ses-transport";
import type { EmailTransport } from "@invoicing/core/email/transport";
import { createEventBridgeBus } from "@invoicing/core/events/bus";
import { createDeps } from "./deps";
import { withDocumentRenderer } from "./document-deps";

/**
 * The dependencies of what delivers: the stream subscriber (events, webhooks, email) and the jobs
 * (the outbox sweep, webhook retries). The request's dependencies plus the email transport,
 * deployed, the event bus, and the PDF renderer (the invoice email carries its PDF, drawn where it
 * is delivered — never in the API function, whose bundle stays without pdf-lib).
 */
export function createDeliveryDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  const config = loadConfig(env);
  return {
    ...withDocumentRenderer(createDeps(env)),
    outbox: emailTransport(config, env),
    eventBus: config.eventBusName
      ? createEventBridgeBus(config.eventBusName, config.region, config.eventBridgeEndpoint)
      : undefined,
  };
}

/**
 * The email outbox's backend (docs/email-and-public-pages.md): Amazon SES when a sender is
 * configured (the linked `Email` deployed), else `.eml` files under <DATA_DIR>/outbox/ (DATA_DIR
 * default .data, as in packages/local/src/paths.ts). A deployed function infra links no sender to
 * (the recurring job only queues emails) has none: a queued email stays for the deliverers.
 */
function emailTransport(config: CoreConfig, env: NodeJS.ProcessEnv): EmailTransport | undefined {
  const sender = emailSender(config.emailSender, env);
  if (config.emailSender) {
    return new SesTransport(createSesClient(config.region), { ...sender, configurationSet: config.emailConfigSet });
  }
  if (env.AWS_LAMBDA_FUNCTION_NAME) return undefined;
  return new FileTransport(join(resolve(env.DATA_DIR || ".data"), "outbox"), sender);
}
