import { runOverdueJob } from "@invoicing/core/invoices/overdue-job";
import { scheduledJob } from "./scheduled";

/** CronV2 "OverdueJob" (infra/jobs.ts). Sent invoices past their due date become overdue. */
export const handler = scheduledJob("overdue", runOverdueJob);
