import { api } from "./api";
import { email } from "./email";
import { lambdaRuntime } from "./runtime";
import { stripeSecretKey } from "./secrets";
import { table } from "./storage";

/**
 * The scheduled jobs: one EventBridge Scheduler schedule (CronV2) and one small
 * Lambda each, calling the same core job as `npm run jobs`. A job works only on what is due (the
 * byDue index) and is safe to run twice or concurrently, so a late or repeated run is harmless and a
 * failed one is caught up by the next.
 *
 * Each links only what it touches: every job the table; the jobs that email (recurring's auto-send,
 * reminders) the sender and the API URL for the public link; recurring's auto-send also creates
 * payment links, so it gets the card processor's key (never the webhook secret).
 */
const jobFunction = (file: string, link: unknown[], timeout: "1 minute" | "5 minutes" = "5 minutes") => ({
  handler: `packages/functions/src/lambda/jobs/${file}.handler`,
  ...lambdaRuntime,
  // Bounded by the work due since the last run; five minutes leaves ten before the next one.
  timeout,
  memory: "512 MB" as const,
  link,
});

export const jobs = {
  // Sent invoices past their due date become overdue: every 15 minutes, so "overdue" is never
  // more than a quarter of an hour late.
  overdue: new sst.aws.CronV2("OverdueJob", {
    schedule: "rate(15 minutes)",
    function: jobFunction("overdue", [table]),
  }),
  // Recurring schedules generate (and auto-send) every occurrence due by now.
  recurring: new sst.aws.CronV2("RecurringJob", {
    schedule: "rate(15 minutes)",
    function: jobFunction("recurring", [table, email, api, stripeSecretKey]),
  }),
  // Reminder emails (due − 3 days, due date, + 7, + 14, + 30 days) go out within 15 minutes.
  reminders: new sst.aws.CronV2("RemindersJob", {
    schedule: "rate(15 minutes)",
    function: jobFunction("reminders", [table, email, api]),
  }),
  // Estimates past their expiry date become expired; dates are whole days, so hourly is plenty.
  expireEstimates: new sst.aws.CronV2("ExpireEstimatesJob", {
    schedule: "rate(1 hour)",
    function: jobFunction("expire-estimates", [table]),
  }),
  // Webhook attempts that are due: retries (the first comes 1 minute after a failure) and first
  // attempts a crashed subscriber left. Every 2 minutes, so a retry is at most 2 minutes late; a
  // minute's run makes ~40 attempts (8 at a time, 10 s each at worst), the next run the rest.
  webhooks: new sst.aws.CronV2("WebhooksJob", {
    schedule: "rate(2 minutes)",
    function: jobFunction("webhooks", [table], "1 minute"),
  }),
};
