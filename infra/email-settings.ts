import { isNamedStage, STAGES, type StageSettings, stageSettings } from "./stages";

/**
 * A stage's email settings, read and checked in one place (docs/deploying.md, "Email"). Plain code
 * without SST's globals, so the tests can call it directly.
 *
 * The sender, whether the stage owns its SES identity and where its DNS is are stage settings in
 * code (infra/stages.ts). A personal stage (any but dev and production) starts from dev's sender,
 * shared; its developer may override it from the shell or `.env.<stage>`:
 * - EMAIL_SENDER: the address or domain emails come from.
 * - EMAIL_IDENTITY: `own` or `shared`. SES allows an identity once per account and region, so two
 *   stages with the same sender cannot both create it: the first owns it (creates, verifies and, on
 *   `sst remove`, deletes it); the others say `shared` and only reference it. Production always owns
 *   its identity: it must not depend on a disposable stage's.
 * - EMAIL_DNS: `route53` (SST adds a domain's DKIM and DMARC records to its Route 53 hosted zone) or
 *   `manual` (the DNS is elsewhere: nothing is looked up in Route 53, and the deploy prints the
 *   records to add). Only meaningful for a domain sender.
 * For dev and production the environment may repeat the map's value but not change it: a second
 * source that only one laptop has is what the map replaces.
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

const OVERRIDES = { EMAIL_SENDER: "sender", EMAIL_IDENTITY: "identity", EMAIL_DNS: "dns" } as const;

export function emailSettings(
  stage: string,
  env: Record<string, string | undefined>,
  stages: { production: StageSettings; dev: StageSettings } = STAGES,
): EmailSettings {
  const base = stageSettings(stage, stages).email;
  const given: Record<"sender" | "identity" | "dns", string> = { ...base };
  for (const [variable, field] of Object.entries(OVERRIDES)) {
    const value = env[variable]?.trim();
    if (!value) continue;
    if (isNamedStage(stage) && value !== base[field])
      throw new EmailSettingsError(
        `${variable}=${value} differs from ${stage}'s ${field} "${base[field]}" in infra/stages.ts: ` +
          `change the stage settings there (and unset ${variable} in the shell or .env.${stage})`,
      );
    given[field] = value;
  }
  const sender = given.sender;
  const isDomain = !sender.includes("@");
  if (!(isDomain ? DOMAIN : ADDRESS).test(sender)) {
    throw new EmailSettingsError(`EMAIL_SENDER "${sender}" is neither an email address nor a domain name`);
  }
  const identity = choice("EMAIL_IDENTITY", given.identity, ["own", "shared"] as const);
  if (identity === "shared" && stage === "production") {
    throw new EmailSettingsError("production owns its SES identity: set email.identity to own in infra/stages.ts");
  }
  const dns = choice("EMAIL_DNS", given.dns, ["route53", "manual"] as const);
  if (dns === "manual" && !isDomain) {
    throw new EmailSettingsError(
      "EMAIL_DNS=manual is for a domain sender; an address is verified by the link SES emails to it",
    );
  }
  // SST's Email creates _dmarc.<sender> on Route 53; at a zone's apex that record usually exists
  // already, and the deploy fails midway on the collision. Owners only: a shared identity creates nothing.
  if (isDomain && dns === "route53" && identity === "own" && isApex(sender) && !base.createApexDmarc) {
    throw new EmailSettingsError(
      `${sender} looks like its zone's apex: SST would create _dmarc.${sender}, which collides with an existing ` +
        "DMARC record. Send from a subdomain (mail.example.com), use EMAIL_DNS=manual, or, if the apex has no " +
        'DMARC record, set email.createApexDmarc: true in infra/stages.ts (docs/deploying.md, "Email")',
    );
  }
  return { sender, isDomain, identity, dns };
}

/**
 * A registrable domain (example.com, example.co.uk): two labels, or three whose middle one is a
 * common second-level label. Conservative on purpose: a false "apex" is one opt-in away.
 */
function isApex(domain: string): boolean {
  const labels = domain.toLowerCase().split(".");
  if (labels.length <= 2) return true;
  return labels.length === 3 && ["co", "com", "org", "net", "gov", "ac", "edu"].includes(labels[1]!);
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
