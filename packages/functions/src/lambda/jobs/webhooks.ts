import { runWebhooksJob } from "@invoicing/core/webhooks/webhooks-job";
import { scheduledJob } from "./scheduled";

/** CronV2 "WebhooksJob" (infra/jobs.ts). Webhook attempts that are due: retries, and first attempts a crash left. */
export const handler = scheduledJob("webhooks", runWebhooksJob);
