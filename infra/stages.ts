/**
 * Every non-secret setting of each stage, in code (docs/deploying.md, "Stage settings"): where the
 * stage lives (region, AWS profile, the account that profile must resolve to), its public domain,
 * its email sender, who is paged, its budget and its public routes' throttling. A deploy from CI, from
 * another laptop or from a shell with another default region reads the same values: nothing comes
 * from an untracked `.env.<stage>`. Secrets (the card processor's keys) stay in `sst secret`.
 *
 * `production` and `dev` are named here, each in its own AWS account (their own Lambda concurrency,
 * SES reputation and API throttle). Any other stage is a developer's personal copy in dev's account
 * and region: no domain, no alarms, dev's sender shared (personalStage below).
 *
 * Plain code without SST's globals, so the tests call it directly (test/deploy/stages.test.ts), and
 * `sst.config.ts`'s app() can read it before the globals exist.
 *
 * The values below are the template's: replace the accounts, profiles, domains and addresses with
 * your own before the first deploy (docs/deploying.md, step 1). The accounts are placeholders no
 * real AWS account has, so an unedited deploy stops at the provider's account check.
 */

/** Who hears about what: every alarm pages; warnings only inform. */
export interface AlarmTargets {
  /**
   * Subscribed to the `Alarms` topic: every alarm and its return to OK. At least one email address
   * (AWS asks it to confirm the subscription) or HTTPS endpoint (a pager's SNS integration URL,
   * e.g. PagerDuty's or Opsgenie's; it confirms the subscription itself).
   */
  page: { emails: readonly string[]; https?: readonly string[] };
  /** Subscribed to the `Warnings` topic: early signs that do not need anyone now (docs/operations.md, "Warnings"). */
  warn: { emails: readonly string[] };
}

/** The per-route limits of API Gateway's throttling of the public paths (infra/stage.ts, publicThrottling). */
export interface PublicThrottling {
  payLink: { rateLimit: number; burstLimit: number };
  file: { rateLimit: number; burstLimit: number };
  page: { rateLimit: number; burstLimit: number };
}

export interface EmailStageSettings {
  /** The address or domain emails come from (best a sending subdomain, mail.example.com). */
  sender: string;
  /**
   * `own`: this stage creates and verifies the SES identity (and deletes it on `sst remove`);
   * `shared`: another stage of the same account and region owns it, this one only references it.
   */
  identity: "own" | "shared";
  /** For a domain sender: `route53` (SST adds DKIM and DMARC to its hosted zone) or `manual` (the deploy prints them). */
  dns: "route53" | "manual";
  /**
   * A domain sender that is its zone's apex (example.com rather than mail.example.com) on Route 53:
   * SST would create `_dmarc.example.com`, which collides with the DMARC record most domains already
   * have and fails the deploy midway. Refused unless set to true: "this apex has no DMARC record yet,
   * create one" (infra/email-settings.ts).
   */
  createApexDmarc?: boolean;
}

export interface StageSettings {
  /** Every resource of the stage is created in this region (the AWS provider's `region`). */
  region: string;
  /** The AWS CLI profile the deploy runs with (`aws configure sso` or keys), whatever the shell's default. */
  profile: string;
  /** The account that profile must resolve to: the provider refuses any other (`allowedAccountIds`). */
  account: string;
  /**
   * The API's custom domain, the base of every public link emailed and of the card processor's
   * webhook (infra/api.ts). `route53`: SST creates the certificate and the alias in the zone;
   * `{ cert }`: the DNS is elsewhere, the ACM certificate (same region) is made and validated by hand.
   * Undefined: the public base URL is API Gateway's own (personal stages only).
   */
  domain?: { name: string; dns: "route53" | { cert: string } };
  email: EmailStageSettings;
  /** false: no alarms at all (personal stages: ~40 alarms at $0.10 a month for nobody). */
  alarms: false | AlarmTargets;
  /** A monthly cost budget of the account, in USD: warned at 80 % of actual and 100 % of forecast spend. */
  budget?: { monthlyUsd: number; emails: readonly string[] };
  publicThrottling: PublicThrottling;
  /**
   * true: the stream subscriber's event source mapping is disabled (it keeps its place in the
   * stream and resumes from it when set back). For a restore's copy-back (docs/operations.md,
   * "Backups"): a setting deployed, not a hand edit a later deploy would silently undo.
   */
  streamPaused?: boolean;
}

/** Production must page someone and must have its own domain: the type says so, and so does stageSettings. */
type ProductionSettings = StageSettings & { alarms: AlarmTargets; domain: NonNullable<StageSettings["domain"]> };

/**
 * Ceilings for the whole stage, well above one token's limit (PUBLIC_RATE_LIMIT, 10 a second,
 * enforced per token by the app: docs/limits.md), so one hammered link is refused by its own limit
 * and never takes the stage's share from every other business's links (they were 10, 20 and 50).
 * The pay link's stays under the card processor's live-mode rate limit (100 a second per account).
 */
const DEFAULT_THROTTLING: PublicThrottling = {
  payLink: { rateLimit: 50, burstLimit: 100 },
  file: { rateLimit: 200, burstLimit: 400 },
  page: { rateLimit: 500, burstLimit: 1000 },
};

export const STAGES: { production: ProductionSettings; dev: StageSettings } = {
  production: {
    region: "us-east-1",
    profile: "invoicing-production",
    account: "111111111111",
    domain: { name: "api.example.com", dns: "route53" },
    email: { sender: "billing@example.com", identity: "own", dns: "route53" },
    alarms: { page: { emails: ["oncall@example.com"] }, warn: { emails: ["ops@example.com"] } },
    budget: { monthlyUsd: 100, emails: ["ops@example.com"] },
    publicThrottling: DEFAULT_THROTTLING,
  },
  dev: {
    region: "us-east-1",
    profile: "invoicing-dev",
    account: "222222222222",
    domain: { name: "api.dev.example.com", dns: "route53" },
    email: { sender: "billing@example.com", identity: "own", dns: "route53" },
    alarms: { page: { emails: ["dev-alarms@example.com"] }, warn: { emails: ["dev-alarms@example.com"] } },
    budget: { monthlyUsd: 30, emails: ["dev-alarms@example.com"] },
    publicThrottling: DEFAULT_THROTTLING,
  },
};

/** A developer's own stage: in dev's account and region, dev's sender shared, no domain, no alarms, no budget. */
export function personalStage(dev: StageSettings): StageSettings {
  return {
    region: dev.region,
    profile: dev.profile,
    account: dev.account,
    email: { ...dev.email, identity: "shared" },
    alarms: false,
    publicThrottling: dev.publicThrottling,
  };
}

export class StageSettingsError extends Error {
  override name = "StageSettingsError";
}

const EMAIL = /^[^\s@<>]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/;
const HOST = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/;

/**
 * The settings of `stage`, checked: what infra and sst.config.ts read. `stages` is the map above
 * (a parameter so the tests can check the refusals with maps of their own).
 */
export function stageSettings(
  stage: string,
  stages: { production: StageSettings; dev: StageSettings } = STAGES,
): StageSettings {
  const named = stage === "production" || stage === "dev";
  const settings = named ? stages[stage] : personalStage(stages.dev);
  if (!/^[a-z]{2}-[a-z]+-\d$/.test(settings.region))
    throw new StageSettingsError(`${stage}: "${settings.region}" is not an AWS region`);
  if (!/^\d{12}$/.test(settings.account))
    throw new StageSettingsError(`${stage}: the account must be a 12-digit AWS account id, not "${settings.account}"`);
  if (settings.domain && !HOST.test(settings.domain.name))
    throw new StageSettingsError(`${stage}: "${settings.domain.name}" is not a domain name`);
  if (settings.alarms) {
    const { page, warn } = settings.alarms;
    for (const address of [...page.emails, ...warn.emails])
      if (!EMAIL.test(address)) throw new StageSettingsError(`${stage}: "${address}" is not an email address`);
    for (const url of page.https ?? [])
      if (!url.startsWith("https://")) throw new StageSettingsError(`${stage}: a pager endpoint must be https://`);
  }
  if (stage === "production") {
    const page = settings.alarms ? settings.alarms.page : undefined;
    if (!page || page.emails.length + (page.https?.length ?? 0) === 0)
      throw new StageSettingsError(
        "production refuses to deploy without an alarm target: set alarms.page (an email or a pager's HTTPS endpoint) in infra/stages.ts",
      );
    if (!settings.domain)
      throw new StageSettingsError(
        "production needs its own domain (infra/stages.ts, domain): emailed links and the card processor's webhook must outlive the API's URL",
      );
  }
  return settings;
}

/** Stages whose settings are named in the map (the others are personal). */
export const isNamedStage = (stage: string): boolean => stage === "production" || stage === "dev";
