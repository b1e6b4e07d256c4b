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
 * Plain code without SST's globals, so the tests call it directly (test/deploy/go-live.test.ts), and
 * `sst.config.ts`'s app() can read it before the globals exist.
 *
 * The values below are the template's: replace the accounts, profiles, domains and addresses with
 * your own before the first deploy (docs/deploying.md, step 1). The accounts are placeholders no
 * real AWS account has, so an unedited deploy stops at the provider's account check.
 */

/**
 * A chat channel AWS Chatbot posts the `Alarms` topic to (infra/alarms.ts). The Slack workspace or
 * Microsoft Teams team must first be authorized in the AWS Chatbot console, once per account: a
 * browser sign-in no code can do (docs/deploying.md, step 5). Private Slack channels also need
 * `/invite @aws` there.
 */
export type ChatChannel =
  /** Slack: the workspace's id (`T…`, the Chatbot console shows it) and the channel's (`C…`). */
  | { slack: { workspaceId: string; channelId: string } }
  /** Microsoft Teams: the tenant and team ids (UUIDs) and the channel's id (`19:…@thread.tacv2`). */
  | { teams: { tenantId: string; teamId: string; channelId: string } };

/** Who hears about what: every alarm pages; warnings only inform. */
export interface AlarmTargets {
  /**
   * Subscribed to the `Alarms` topic: every alarm and its return to OK. At least one email address
   * (AWS asks it to confirm the subscription), HTTPS endpoint (a pager's SNS integration URL, e.g.
   * PagerDuty's or Opsgenie's; it confirms the subscription itself) or chat channel (AWS Chatbot).
   */
  page: { emails: readonly string[]; https?: readonly string[]; chat?: readonly ChatChannel[] };
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
    for (const channel of page.chat ?? []) checkChatChannel(stage, channel);
  }
  if (settings.domain && typeof settings.domain.dns === "object") {
    // API Gateway takes a regional domain's certificate from ACM in the API's own region only.
    const region = /^arn:aws:acm:([a-z0-9-]+):\d{12}:certificate\/[\w-]+$/.exec(settings.domain.dns.cert)?.[1];
    if (region !== settings.region)
      throw new StageSettingsError(
        `${stage}: domain.dns.cert must be the ARN of an ACM certificate in ${settings.region} (the stage's region), not "${settings.domain.dns.cert}"`,
      );
  }
  if (stage === "production") {
    const page = settings.alarms ? settings.alarms.page : undefined;
    if (!page || page.emails.length + (page.https?.length ?? 0) + (page.chat?.length ?? 0) === 0)
      throw new StageSettingsError(
        "production refuses to deploy without an alarm target: set alarms.page (an email, a pager's HTTPS endpoint or a chat channel) in infra/stages.ts",
      );
    if (!settings.domain)
      throw new StageSettingsError(
        "production needs its own domain (infra/stages.ts, domain): emailed links and the card processor's webhook must outlive the API's URL",
      );
  }
  return settings;
}

const SLACK_WORKSPACE = /^T[A-Z0-9]{2,}$/;
const SLACK_CHANNEL = /^[CG][A-Z0-9]{2,}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The ids AWS Chatbot takes, so a slip (a channel's name for its id) stops the deploy before AWS does. */
function checkChatChannel(stage: string, channel: ChatChannel): void {
  if ("slack" in channel) {
    const { workspaceId, channelId } = channel.slack;
    if (!SLACK_WORKSPACE.test(workspaceId) || !SLACK_CHANNEL.test(channelId))
      throw new StageSettingsError(
        `${stage}: a Slack channel is { workspaceId: "T…", channelId: "C…" } (ids, not names), not ${JSON.stringify(channel.slack)}`,
      );
  } else {
    const { tenantId, teamId, channelId } = channel.teams;
    if (!UUID.test(tenantId) || !UUID.test(teamId) || !/^19:\S+@thread\.\w+$/.test(channelId))
      throw new StageSettingsError(
        `${stage}: a Teams channel is { tenantId: <uuid>, teamId: <uuid>, channelId: "19:…@thread.tacv2" }, not ${JSON.stringify(channel.teams)}`,
      );
  }
}

/** Stages whose settings are named in the map (the others are personal). */
export const isNamedStage = (stage: string): boolean => stage === "production" || stage === "dev";
