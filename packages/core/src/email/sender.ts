import type { EmailSender } from "../capabilities/email-transport";

/**
 * Who emails come from. Deployed, the sender is the linked `sst.aws.Email` (an address, or a domain
 * whose `invoices@` address is used); locally a placeholder. EMAIL_FROM overrides the address
 * (`Billing <billing@example.com>` allowed; it must belong to the SES identity when deployed) and
 * EMAIL_REPLY_TO sets where replies go.
 */
export const LOCAL_FROM = "Invoicing <invoices@localhost>";

export function emailSender(sesSender: string | undefined, env: NodeJS.ProcessEnv): EmailSender {
  const configured = env.EMAIL_FROM?.trim();
  const fromIdentity = sesSender ? (sesSender.includes("@") ? sesSender : `invoices@${sesSender}`) : LOCAL_FROM;
  const replyTo = env.EMAIL_REPLY_TO?.trim();
  return { from: configured || fromIdentity, ...(replyTo ? { replyTo } : {}) };
}
