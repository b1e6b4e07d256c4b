import { runPeppolJob } from "@invoicing/core/peppol/delivery";
import { peppolHandOver } from "../../capabilities/peppol-hand-over";
import { scheduledJob } from "./scheduled";

/** CronV2 "PeppolJob" (infra/jobs.ts). Peppol hand-overs that are due: retries, and polls of the outcome. */
export const handler = scheduledJob("peppol", runPeppolJob, [peppolHandOver]);
