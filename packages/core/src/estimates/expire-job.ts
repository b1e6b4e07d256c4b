import { statusChangeJob } from "../queue/status-job";

/**
 * The `expire-estimates` job: a sent estimate whose validUntil is earlier than `now` becomes
 * expired. The run dispatches the byDue list of sent estimates with a validUntil (db/keys.ts
 * DUE_LISTS) to the `expire-estimates` queue; the worker's write is conditioned on the record
 * itself — still sent, validUntil still before now (queue/status-job.ts) — not on the index entry,
 * which may lag a PATCH that moved validUntil; so a second or concurrent run, a message given twice,
 * or a stale entry, changes nothing.
 */
const expireEstimates = statusChangeJob({
  job: "expire-estimates",
  kind: "ESTIMATE",
  from: "sent",
  to: "expired",
  before: "validUntil",
});

export const expireEstimatesWorker = expireEstimates.worker;
export const runExpireEstimatesJob = expireEstimates.run;
