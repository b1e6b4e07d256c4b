import { join, resolve } from "node:path";
import { FileTransport } from "@invoicing/core/email/file-transport";
import { emailSender } from "@invoicing/core/email/sender";
import { SesTransport, createSesClient } from "@invoicing/core/email/ses-transport";
import type { Capability } from "./base";

/**
 * The email outbox's backend (API.md section 9): Amazon SES when a sender is configured (the linked
 * `Email` deployed), else `.eml` files under <DATA_DIR>/outbox/ (DATA_DIR default .data, as in
 * packages/local/src/paths.ts). Carries the SES SDK: only the functions that deliver email import it.
 */
export const emailOutbox: Capability = (config, env) => {
  const sender = emailSender(config.emailSender, env);
  if (config.emailSender) {
    return { outbox: new SesTransport(createSesClient(config.region), { ...sender, configurationSet: config.emailConfigSet }) };
  }
  return { outbox: new FileTransport(join(resolve(env.DATA_DIR || ".data"), "outbox"), sender) };
};
