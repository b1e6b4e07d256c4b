import "./quiet-sdk";
import { parseArgs } from "node:util";
import { parseTimestamp } from "@invoicing/core/time";
import { JOB_NAMES } from "@invoicing/core/jobs/all";
import { redeliverNow } from "@invoicing/core/webhooks/redelivery";
import { loadConfig } from "@invoicing/core/config";
import { resendEmail } from "@invoicing/core/email/resend";
import { allUsers, backfillReports } from "@invoicing/core/reports/backfill";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { copyRestoredItems } from "./restore-copy";
import { runCommandLine } from "./stack";
import { localFailureFile } from "./stream-failures";
import { replayFeedbackFailures } from "./feedback-replay";
import { replayFailureQueue, replayLocalFailures } from "./stream-replay";
import { runJobs } from "./ticker";

/**
 * `npm run --silent jobs -- <overdue|recurring|reminders|expire-estimates|webhooks|all> [--now <ISO time>]`:
 * runs the same code as the deployed cron functions once and prints one JSON line per job.
 *
 * The operator's commands beside them (docs/events.md "Redelivering", docs/reports.md "Backfill"):
 * `npm run --silent jobs -- redeliver-webhook --user <userId> --endpoint <id> --event <evt_…>`
 * makes one more attempt of a delivery at once and prints its outcome (exit 1 when it failed).
 * `npm run --silent jobs -- resend-email --user <userId> --email <id>` queues a failed email again
 * (as POST /email-deliveries/{id}/resend does) and prints the new email; the stream subscriber
 * delivers it (docs/operations.md).
 * `npm run --silent jobs -- replay-stream-failures [--queue-url <url>]` replays every batch the
 * stream subscriber gave up on (the StreamFailures queue under `sst shell`, or locally npm start's
 * failure list, DATA_DIR/stream-failures.jsonl; packages/local/src/stream-replay.ts) and prints one
 * line per message (exit 1 when one is left).
 * `npm run --silent jobs -- replay-email-feedback-failures [--queue-url <url>]` records again the SES
 * notices the feedback function gave up on (the EmailFeedbackFailures queue;
 * packages/local/src/feedback-replay.ts), one line per message (exit 1 when one is left).
 * `npm run --silent jobs -- backfill-reports --user <userId> | --all-users` rebuilds the report
 * aggregates from the records, one JSON line per user; safe while the stream runs.
 * `npm run --silent jobs -- restore-copy --from <restored table> [--to <live table>] [--user <userId>]
 * [--sk-prefix <prefix>] [--dry-run]` copies back from a point-in-time restore what the live table
 * lacks or has at an older version (packages/local/src/restore-copy.ts; docs/operations.md "Backups"):
 * one JSON line per item copied (dry: to copy), then the counts.
 */
const USAGE = [
  `usage: npm run --silent jobs -- <${[...JOB_NAMES, "all"].join("|")}> [--now <ISO time>]`,
  "       npm run --silent jobs -- redeliver-webhook --user <userId> --endpoint <id> --event <evt_…>",
  "       npm run --silent jobs -- resend-email --user <userId> --email <id>",
  "       npm run --silent jobs -- replay-stream-failures [--queue-url <url>]",
  "       npm run --silent jobs -- replay-email-feedback-failures [--queue-url <url>]",
  "       npm run --silent jobs -- backfill-reports --user <userId> | --all-users",
  "       npm run --silent jobs -- restore-copy --from <restored table> [--to <live table>] [--user <userId>] [--sk-prefix <prefix>] [--dry-run]",
].join("\n");

runCommandLine(async (open) => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      now: { type: "string" },
      user: { type: "string" },
      endpoint: { type: "string" },
      event: { type: "string" },
      email: { type: "string" },
      "queue-url": { type: "string" },
      "all-users": { type: "boolean" },
      from: { type: "string" },
      to: { type: "string" },
      "sk-prefix": { type: "string" },
      "dry-run": { type: "boolean" },
    },
  });
  const which = positionals[0];
  if (which === "resend-email") {
    if (!values.user || !values.email) {
      console.error(USAGE);
      return 2;
    }
    const deps = await open();
    console.log(JSON.stringify(await resendEmail({ ...deps, userId: values.user }, values.email)));
    return 0;
  }
  if (which === "replay-stream-failures") {
    const config = loadConfig();
    // Given, or the stage's StreamFailures queue under `sst shell`.
    const queueUrl = values["queue-url"] ?? config.streamFailuresQueueUrl;
    if (!queueUrl) {
      // Locally: npm start's failure list (what its reader gave up on), from DynamoDB Local's stream.
      const deps = await open();
      const endpoint = process.env.DYNAMODB_ENDPOINT;
      if (!endpoint) {
        console.error("no failure queue here: give --queue-url, or run it in the stage's shell (npx sst shell)");
        return 2;
      }
      const results = await replayLocalFailures(deps, { file: localFailureFile(), streamsEndpoint: endpoint });
      for (const line of results) console.log(JSON.stringify(line));
      return results.every((r) => r.result.outcome === "replayed") ? 0 : 1;
    }
    const results = await replayFailureQueue(await open(), {
      queueUrl,
      region: config.region,
      streamsEndpoint: config.dynamoEndpoint,
    });
    for (const line of results) console.log(JSON.stringify(line));
    return results.every((r) => r.result.outcome === "replayed") ? 0 : 1;
  }
  if (which === "replay-email-feedback-failures") {
    const config = loadConfig();
    const queueUrl = values["queue-url"] ?? config.feedbackFailuresQueueUrl;
    if (!queueUrl) {
      console.error(
        "no feedback failure queue here: run it in the stage's shell (npx sst shell --stage <stage> -- npm run " +
          "--silent jobs -- replay-email-feedback-failures) or give --queue-url. Locally SES sends no feedback.",
      );
      return 2;
    }
    const results = await replayFeedbackFailures(await open(), { queueUrl, region: config.region });
    for (const line of results) console.log(JSON.stringify(line));
    return results.every((r) => r.result.outcome === "replayed") ? 0 : 1;
  }
  if (which === "restore-copy") {
    if (!values.from) {
      console.error(USAGE);
      return 2;
    }
    await open(); // locally: DynamoDB Local running (DYNAMODB_ENDPOINT set), as every command here
    const config = loadConfig();
    const client = new DynamoDBClient({
      region: config.region,
      endpoint: config.dynamoEndpoint,
      credentials: config.dynamoEndpoint ? { accessKeyId: "local", secretAccessKey: "local" } : undefined,
    });
    try {
      const result = await copyRestoredItems(client, {
        from: values.from,
        // The stage's own table by default (under `sst shell`, the linked Table).
        to: values.to ?? config.tableName,
        userId: values.user,
        skPrefix: values["sk-prefix"],
        dryRun: values["dry-run"] === true,
        onCopy: (key) => console.log(JSON.stringify({ ...key, action: values["dry-run"] ? "to-copy" : "copied" })),
      });
      console.log(JSON.stringify(result));
      return 0;
    } finally {
      client.destroy();
    }
  }
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
  if (which === "backfill-reports") {
    if ((values.user === undefined) === (values["all-users"] !== true)) {
      console.error(USAGE);
      return 2;
    }
    const deps = await open();
    const users = values.user !== undefined ? [values.user] : await allUsers(deps);
    for (const userId of users) console.log(JSON.stringify(await backfillReports(deps, userId)));
    return 0;
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
