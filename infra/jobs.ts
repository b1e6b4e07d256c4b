import { publicUrl } from "./api";
import { email } from "./email";
import { functionBase, pdfLibBeside } from "./runtime";
import { cardPayments } from "./secrets";
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
 * Each links only what it touches: every job the table; the reminders job (it delivers what the
 * outbox holds) the sender; the jobs that queue emails (recurring's auto-send, reminders) the API
 * URL for the public link; recurring's auto-send stores a pay link when card payments are on, so it
 * gets the CardPayments flag (never a Stripe key: the session is made when the link is opened).
 */
const jobFunction = (
  logicalName: string,
  file: string,
  link: unknown[],
  timeout: "1 minute" | "5 minutes" = "5 minutes",
) => ({
  // Bounded by the work due since the last run; five minutes leaves ten before the next one.
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
  OverdueJob: { schedule: "rate(15 minutes)", function: jobFunction("OverdueJob", "overdue", [table]) },
  // Recurring schedules generate (and auto-send) every occurrence due by now.
  RecurringJob: {
    schedule: "rate(15 minutes)",
    function: jobFunction("RecurringJob", "recurring", [table, publicUrl, cardPayments]),
  },
  // Reminder emails (due − 3 days, due date, + 7, + 14, + 30 days) go out within 15 minutes.
  RemindersJob: {
    schedule: "rate(15 minutes)",
    function: { ...jobFunction("RemindersJob", "reminders", [table, email, publicUrl]), ...pdfLibBeside },
  },
  // Estimates past their expiry date become expired; dates are whole days, so hourly is plenty.
  ExpireEstimatesJob: {
    schedule: "rate(1 hour)",
    function: jobFunction("ExpireEstimatesJob", "expire-estimates", [table]),
  },
  // Webhook attempts that are due: retries (the first comes 1 minute after a failure) and first
  // attempts a crashed subscriber left. Every 2 minutes, so a retry is at most 2 minutes late; a
  // minute's run makes ~40 attempts (8 at a time, 10 s each at worst), the next run the rest.
  WebhooksJob: {
    schedule: "rate(2 minutes)",
    function: jobFunction("WebhooksJob", "webhooks", [table], "1 minute"),
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
