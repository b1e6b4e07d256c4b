/**
 * Per-tenant limits and per-function concurrency, per stage (API.md section 16; docs/limits.md).
 *
 * Limits: every function gets the stage's defaults as environment variables, read by
 * packages/functions/src/capabilities/create-deps.ts exactly as `npm start` reads them; a user's own limits
 * are set with `npm run users -- limits` under `npx sst shell --stage <stage>`.
 *
 * Reserved concurrency: each function gets its own share of the account's regional concurrency
 * (1,000 by default; AWS keeps at least 100 unreserved), so none can take another's: a flood of
 * API requests cannot starve the stream subscriber (events, emails), the card processor's webhook
 * or the jobs, and a stuck job cannot starve the API. A user past its rate limit is refused in
 * milliseconds (429, mostly from the container's memory), so a hot user holds few containers.
 * The sizes (production) and why:
 * - Api 300: ~20 ms of handler time per request (npm run bench), so 300 containers serve ~15,000
 *   requests a second — 300 users at their full default limit at once.
 * - Documents 100: a PDF costs ~50–150 ms, a Factur-X up to ~0.5 s; 100 serve ~700 PDFs a second.
 * - Payments 50: the pay link waits on the card processor (~0.5 s) and its webhook; 50 keep ~100
 *   opens a second, the card processor's own live-mode rate limit.
 * - StreamSubscriber 40: concurrent batches per stream shard (up to 10 with a parallelization
 *   factor of 10) times the shards; 40 covers 4 shards at that factor, far beyond this table.
 * - EmailFeedback 10, each job 2 (one run per schedule; 2 lets a slow run overlap the next).
 * In all 512, leaving 488 of the default 1,000 unreserved for functions not listed here (the queue
 * workers, whose event source mappings bound their concurrency themselves).
 * Other stages reserve nothing: stages often share an account, and a second stage's reservations
 * would not fit beside production's; they draw from the unreserved pool as before.
 */
export interface StageLimits {
  /** API_RATE_LIMIT: requests per second per user, on every authenticated route together. */
  apiRateLimit: number;
  /** PUBLIC_RATE_LIMIT: requests per second per public token. */
  publicRateLimit: number;
  /** EMAIL_DAILY_QUOTA: emails per user in any 24 hours. */
  emailDailyQuota: number;
  /** Reserved concurrency by function (logical name); a function not named reserves none. */
  reservedConcurrency: Readonly<Record<string, number>>;
}

const DEFAULT_LIMITS = { apiRateLimit: 50, publicRateLimit: 10, emailDailyQuota: 200 } as const;

const PRODUCTION_RESERVED: Readonly<Record<string, number>> = {
  Api: 300,
  Documents: 100,
  Payments: 50,
  StreamSubscriber: 40,
  EmailFeedback: 10,
  OverdueJob: 2,
  RecurringJob: 2,
  RemindersJob: 2,
  ExpireEstimatesJob: 2,
  WebhooksJob: 2,
  PeppolJob: 2,
};

export function stageLimits(production: boolean): StageLimits {
  return { ...DEFAULT_LIMITS, reservedConcurrency: production ? PRODUCTION_RESERVED : {} };
}

/** What functionBase gives each function: the limits' variables and its reserved concurrency. */
export function limitsOf(production: boolean, logicalName: string) {
  const limits = stageLimits(production);
  const reserved = limits.reservedConcurrency[logicalName];
  return {
    environment: {
      API_RATE_LIMIT: String(limits.apiRateLimit),
      PUBLIC_RATE_LIMIT: String(limits.publicRateLimit),
      EMAIL_DAILY_QUOTA: String(limits.emailDailyQuota),
    },
    ...(reserved === undefined ? {} : { concurrency: { reserved } }),
  };
}
