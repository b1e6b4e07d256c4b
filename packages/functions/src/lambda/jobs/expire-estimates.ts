import { runExpireEstimatesJob } from "@invoicing/core/estimates/expire-job";
import { scheduledJob } from "./scheduled";

/** CronV2 "ExpireEstimatesJob" (infra/jobs.ts). Sent estimates past their expiry date become expired. */
export const handler = scheduledJob("expire-estimates", runExpireEstimatesJob);
