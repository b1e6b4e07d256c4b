import { queues } from "./queues";
import { storecoveApiKey } from "./secrets";
import { functionBase } from "./runtime";
import { table } from "./storage";

/**
 * The scheduled jobs: one EventBridge Scheduler schedule (CronV2) and one small
 * Lambda each, calling the same core job as `npm run jobs`. A job works only on what is due (the
 * byDue index) and is safe to run twice or concurrently, so a late or repeated run is harmless and a
 * failed one is caught up by the next.
 *
 * No retries, neither by the scheduler nor by Lambda's asynchronous invocation (by default up to 2,
 * minutes apart): the next run is at most 15 minutes away and does the same work, and a retry of a
 * run that timed out would only overlap the next one.
 *
 * Each run is a dispatcher (packages/core/src/queue/dispatch.ts): it reads the job's due list and
 * sends the records, users in turns, to the job's queue (infra/queues.ts), whose workers do the
 * work. So each links only the table (to read the due list) and its queue(s) (to send): the
 * reminders job also sweeps the outbox into the outbox queue.
 */
const jobFunction = (
  logicalName: string,
  file: string,
  link: unknown[],
  timeout: "1 minute" | "5 minutes" = "5 minutes",
) => ({
  // Reading the due keys and sending them: seconds for a month start's ~100,000 records; the
  // dispatcher stops 5 s before the timeout and the next run sends the rest.
  ...functionBase(logicalName, timeout),
  handler: `packages/functions/src/lambda/jobs/${file}.handler`,
  memory: "512 MB" as const,
  link,
  retries: 0,
});

/**
 * Each job: its function and its schedule. The schedules are listed in docs/deploying.md (a test
 * compares them).
 */
const JOBS = {
  // Sent invoices past their due date become overdue: every 15 minutes, so "overdue" is never
  // more than a quarter of an hour late.
  OverdueJob: {
    schedule: "rate(15 minutes)",
    function: jobFunction("OverdueJob", "overdue", [table, queues.overdue.queue]),
  },
  // Recurring schedules generate (and auto-send) every occurrence due by now.
  RecurringJob: {
    schedule: "rate(15 minutes)",
    function: jobFunction("RecurringJob", "recurring", [table, queues.recurring.queue]),
  },
  // Reminder emails (due − 3 days, due date, + 7, + 14, + 30 days) go out within 15 minutes.
  RemindersJob: {
    schedule: "rate(15 minutes)",
    function: jobFunction("RemindersJob", "reminders", [table, queues.reminders.queue, queues.outbox.queue]),
  },
  // Estimates past their expiry date become expired; dates are whole days, so hourly is plenty.
  ExpireEstimatesJob: {
    schedule: "rate(1 hour)",
    function: jobFunction("ExpireEstimatesJob", "expire-estimates", [table, queues["expire-estimates"].queue]),
  },
  // Webhook attempts that are due: retries (the first comes 1 minute after a failure) and first
  // attempts a crashed subscriber or a late worker left. Every 2 minutes, so a retry is at most 2
  // minutes late; a run reads at most 500 per shard and 100 per user, the next run the rest.
  WebhooksJob: {
    schedule: "rate(2 minutes)",
    function: jobFunction("WebhooksJob", "webhooks", [table, queues.webhooks.queue], "1 minute"),
  },
  // Peppol deliveries that are due (docs/peppol.md): a retry after a failed hand-over (the first
  // 1 minute after it) and the polls of the provider's delivery evidence (the first 1 minute after
  // the hand-over). Every 5 minutes: a delivery's outcome shows within minutes of the provider
  // knowing it (API.md section 19) without a run a minute when there is nothing due; the backoff
  // then waits 5 minutes, 30 minutes, 2 hours. Unlike the others it does the work itself (few
  // deliveries, each a call to the provider): it links the table and the provider's key, no queue.
  PeppolJob: {
    schedule: "rate(5 minutes)",
    function: jobFunction("PeppolJob", "peppol", [table, storecoveApiKey], "1 minute"),
  },
} as const;

export const jobs = Object.fromEntries(
  Object.entries(JOBS).map(([name, job]) => [
    name,
    new sst.aws.CronV2(name, { schedule: job.schedule, function: job.function, retries: 0 }),
  ]),
);

/**
 * Each job's interval in seconds, read from its schedule (`rate(…)`): the "stopped running" alarms
 * (infra/alarms.ts) expect an invocation within twice it.
 */
export const jobIntervals: Record<string, number> = Object.fromEntries(
  Object.entries(JOBS).map(([name, job]) => [name, rateSeconds(job.schedule)]),
);

function rateSeconds(schedule: string): number {
  const match = /^rate\((\d+) (minute|hour)s?\)$/.exec(schedule);
  if (!match) throw new Error(`infra/jobs.ts: ${schedule} is not a rate(n minutes|hours) expression`);
  return Number(match[1]) * (match[2] === "hour" ? 3600 : 60);
}
