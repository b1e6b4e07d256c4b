/**
 * The deploying shell's email settings for a stage (docs/deploying.md, "Email"), read and checked in
 * one place. Plain code without SST's globals, so the tests can call it directly.
 *
 * - EMAIL_SENDER: the address or domain emails come from. Required to deploy or diff; SST also reads
 *   it from `.env` or `.env.<stage>`, so it can be set once per stage instead of on every command.
 * - EMAIL_IDENTITY: `own` (default) or `shared`. SES allows an identity once per account and region,
 *   so two stages with the same sender cannot both create it: the first owns it (creates, verifies
 *   and, on `sst remove`, deletes it); the others say `shared` and only reference it. Production
 *   always owns its identity: it must not depend on a disposable stage's.
 * - EMAIL_DNS: `route53` (default: SST adds a domain's DKIM and DMARC records to its Route 53
 *   hosted zone) or `manual` (the DNS is elsewhere: nothing is looked up in Route 53, and the deploy
 *   prints the records to add). Only meaningful for a domain sender.
 */
interface EmailSettings {
  sender: string;
  isDomain: boolean;
  identity: "own" | "shared";
  dns: "route53" | "manual";
}

class EmailSettingsError extends Error {
  override name = "EmailSettingsError";
}

const ADDRESS = /^[^\s@<>]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/;
const DOMAIN = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/;

export function emailSettings(stage: string, env: Record<string, string | undefined>): EmailSettings {
  const sender = env.EMAIL_SENDER?.trim();
  if (!sender) {
    throw new EmailSettingsError(
      "Set EMAIL_SENDER to the address or domain invoices are sent from, in the shell or in .env.<stage> " +
        "(e.g. EMAIL_SENDER=billing@example.com npx sst deploy); see docs/deploying.md",
    );
  }
  const isDomain = !sender.includes("@");
  if (!(isDomain ? DOMAIN : ADDRESS).test(sender)) {
    throw new EmailSettingsError(`EMAIL_SENDER "${sender}" is neither an email address nor a domain name`);
  }
  const identity = choice("EMAIL_IDENTITY", env.EMAIL_IDENTITY, ["own", "shared"] as const);
  if (identity === "shared" && stage === "production") {
    throw new EmailSettingsError(
      "production owns its SES identity: unset EMAIL_IDENTITY=shared for --stage production",
    );
  }
  const dns = choice("EMAIL_DNS", env.EMAIL_DNS, ["route53", "manual"] as const);
  if (dns === "manual" && !isDomain) {
    throw new EmailSettingsError(
      "EMAIL_DNS=manual is for a domain sender; an address is verified by the link SES emails to it",
    );
  }
  return { sender, isDomain, identity, dns };
}

function choice<T extends string>(name: string, value: string | undefined, allowed: readonly [T, ...T[]]): T {
  const given = value?.trim();
  if (!given) return allowed[0];
  if (!(allowed as readonly string[]).includes(given)) {
    throw new EmailSettingsError(`${name} must be one of ${allowed.join(", ")}, not "${given}"`);
  }
  return given as T;
}

/**
 * The IAM condition that limits sending to this sender: the From address itself, or any address of
 * the domain. Checked by SES on every SendEmail (the `ses:FromAddress` condition key).
 */
export const fromAddressPattern = (settings: Pick<EmailSettings, "sender" | "isDomain">): string =>
  settings.isDomain ? `*@${settings.sender}` : settings.sender;
