import "./quiet-sdk";
import { parseArgs } from "node:util";
import { parseTimestamp } from "@invoicing/core/time";
import { JOB_NAMES } from "@invoicing/core/jobs/all";
import { redeliverNow } from "@invoicing/core/webhooks/deliveries";
import { runCommandLine } from "./stack";
import { runJobs } from "./ticker";

/**
 * `npm run --silent jobs -- <overdue|recurring|reminders|expire-estimates|webhooks|all> [--now <ISO time>]`:
 * runs the same code as the deployed cron functions once and prints one JSON line per job.
 *
 * The operator's commands beside them (docs/events.md, "Redelivering"):
 * `npm run --silent jobs -- redeliver-webhook --user <userId> --endpoint <id> --event <evt_…>`
 * makes one more attempt of a delivery at once and prints its outcome (exit 1 when it failed).
 */
const USAGE = [
  `usage: npm run --silent jobs -- <${[...JOB_NAMES, "all"].join("|")}> [--now <ISO time>]`,
  "       npm run --silent jobs -- redeliver-webhook --user <userId> --endpoint <id> --event <evt_…>",
].join("\n");

runCommandLine(async (open) => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      now: { type: "string" },
      user: { type: "string" },
      endpoint: { type: "string" },
      event: { type: "string" },
    },
  });
  const which = positionals[0];
  if (which === "redeliver-webhook") {
    const endpointId = Number(values.endpoint);
    if (!values.user || !Number.isSafeInteger(endpointId) || endpointId < 1 || !values.event) {
      console.error(USAGE);
      return 2;
    }
    const delivery = await redeliverNow(await open(), values.user, endpointId, values.event);
    console.log(JSON.stringify(delivery));
    return delivery.status === "succeeded" ? 0 : 1;
  }
  if (!which || (which !== "all" && !JOB_NAMES.includes(which as never))) {
    console.error(USAGE);
    return 2;
  }
  const nowIso = values.now === undefined ? new Date().toISOString() : parseTimestamp(values.now);
  if (!nowIso) {
    console.error(`--now must be an ISO 8601 time, e.g. 2026-11-22T09:30:00Z`);
    return 2;
  }
  const results = await runJobs(await open(), which === "all" ? JOB_NAMES : [which], new Date(nowIso));
  for (const result of results) console.log(JSON.stringify(result));
  return results.some((r) => "error" in r) ? 1 : 0;
});
