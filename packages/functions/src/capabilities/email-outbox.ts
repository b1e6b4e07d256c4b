import { join, resolve } from "node:path";
import { FileTransport } from "@invoicing/core/email/file-transport";
import { emailSender } from "@invoicing/core/email/sender";
import { SesTransport, createSesClient } from "@invoicing/core/email/ses-transport";
import type { Capability } from "./create-deps";

/**
 * The email outbox's backend (docs/email-and-public-pages.md), for what delivers queued emails (the
 * outbox queue's workers, lambda/workers/outbox.ts; the local server): Amazon SES when a sender
 * is configured (the linked `Email` deployed), else `.eml` files under <DATA_DIR>/outbox/
 * (DATA_DIR default .data, as in packages/local/src/paths.ts). Carries the SES SDK.
 */
export const emailOutbox: Capability = (config, env) => {
  const sender = emailSender(config.emailSender, env);
  if (config.emailSender) {
    return {
      outbox: new SesTransport(createSesClient(config.region), { ...sender, configurationSet: config.emailConfigSet }),
    };
  }
  // A deployed function infra links no sender to has none: a queued email stays for the deliverers.
  if (env.AWS_LAMBDA_FUNCTION_NAME) return {};
  return { outbox: new FileTransport(join(resolve(env.DATA_DIR || ".data"), "outbox"), sender) };
};
