import { randomBytes } from "node:crypto";
import type { Deps } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { dispatchDue } from "../queue/dispatch";
import { dueWorker } from "../queue/due-worker";
import { dueKeys, isDueEntry, OFF_DUE_LIST, onDueList, userPk } from "../db/keys";
import { DomainError } from "../errors";
import { errorFields, log as logLine } from "../observability/context-log";
import { METRIC } from "../observability/metric-names";
import { countMetric } from "../observability/metrics";
import type { OutboxStatus } from "./resource";
import type { AttachmentSpec, EmailMessage } from "../capabilities/email-transport";

/**
 * The email outbox: every email is first a record in the table, written in the SAME transaction as
 * the change that causes it (an invoice sent, a reminder due), so an email exists if and only if
 * its change happened. The table's stream subscriber delivers it when it sees the insert
 * (core/src/stream/subscriber.ts, docs/events.md; best effort); a
 * record left undelivered (a crash, a transport error) sits on the byDue list "outbox" and the
 * sweep (run by the `reminders` job) delivers it.
 *
 * Delivery guarantee, on purpose: AT MOST ONCE per attempt, at least once only across reported
 * failures. A deliverer first CLAIMS the record (conditional update pending → sending on the
 * attempt count it read, which also moves it on the due list to the claim's end, CLAIM_TIMEOUT_MS
 * later), then hands it to the transport, then marks it sent. So two deliverers (the subscriber and
 * a concurrent sweep, two overlapping job runs) never both send it, and a sent record is never sent
 * again. A crash between the claim and the transport's answer (the Lambda killed at its timeout,
 * mid-email) leaves the record `sending`; whether SES took the message is unknown. The sweep finds it
 * when the claim has run out and RECLAIMS it as `failed` (lastError "DeliveryInterrupted"), never
 * sends it again by itself — we prefer a rare missing email, visible as failed in
 * GET /email-deliveries and counted in the EmailsFailed metric, to a customer getting the same
 * invoice twice. The user (POST /email-deliveries/{id}/resend) or an operator (`npm run jobs --
 * resend-email`) sends it again knowingly (docs/operations.md). A transport that reports failure
 * gets the record back to `pending` with a growing delay, up to MAX_ATTEMPTS, then `failed`; only a
 * transport that fails AFTER accepting the message (a timeout on a send SES did take) can cause a
 * duplicate.
 */
export type { OutboxStatus };

export interface OutboxItem extends Omit<EmailMessage, "attachments"> {
  /** What to attach, drawn at delivery as of the send (AttachmentSpec; the PDF is never stored). */
  attachment?: AttachmentSpec;
  pk: string;
  sk: string;
  type: "outbox";
  userId: string;
  status: OutboxStatus;
  /** Delivery attempts claimed so far; the claim is conditioned on it. */
  attempts: number;
  sentAt?: string;
  /** When the current `sending` claim was taken (the claim ends CLAIM_TIMEOUT_MS later). */
  claimedAt?: string;
  providerMessageId?: string;
  /** The last transport error's name (never its text: it could quote the message). */
  lastError?: string;
  duePk?: string;
  dueSk?: string;
  /** TTL (epoch seconds), set when delivery is over: sent, or failed (KEEP_SENT_SECONDS, KEEP_FAILED_SECONDS). */
  expiresAt?: number;
}

/** What a use case wants to send: the outbox adds the id, the time and the bookkeeping. */
export type OutgoingEmail = Pick<EmailMessage, "to" | "subject" | "text" | "html" | "fromName" | "replyTo"> & {
  attachment?: AttachmentSpec;
};

const MAX_ATTEMPTS = 5;
/**
 * How long a claim holds: well past anything that still runs — the subscriber's Lambda timeout is
 * 2 minutes, the reminders job's 5 — so a claim that has run out belongs to a deliverer that died.
 */
export const CLAIM_TIMEOUT_MS = 15 * 60_000;
const RETRY_BASE_MS = 60_000;
/**
 * How long an email's record stays once its delivery is over (docs/data-model.md, "What is kept,
 * and for how long"); DynamoDB's TTL deletes it after that, up to days late. A delivered one is
 * kept 30 days for tracing (and for SES's bounce or complaint, which comes within minutes to days).
 * A failed one is what the user has to act on: `GET /email-deliveries` shows it among the latest
 * 100 and `POST /email-deliveries/{id}/resend` copies it, so it is kept three times as long, a
 * quarter, long enough for a monthly look at the list.
 */
const KEEP_SENT_SECONDS = 30 * 86_400;
export const KEEP_FAILED_SECONDS = 90 * 86_400;
const expiresAfter = (nowMs: number, seconds: number): number => Math.floor(nowMs / 1000) + seconds;

/** `20261122T093000000Z-<16 hex>`: sorts by queue time, unique by its random part. */
const newMessageId = (at: string): string => `${at.replace(/[-:.]/g, "")}-${randomBytes(8).toString("hex")}`;
export const outboxKey = (userId: string, id: string) => ({ pk: userPk(userId), sk: `OUTBOX#${id}` });

/**
 * `no_transport`: nothing here can deliver it (no transport, or an attachment to render and no
 * renderer here — the API function has none): it stays pending for a deliverer that can.
 */
type DeliveryOutcome = "delivered" | "failed" | "skipped" | "no_transport";

interface QueuedEmail {
  item: OutboxItem;
  /** The outbox record's Put, for the transaction of the change that causes the email. */
  write: Write;
  /** Call after that transaction committed: delivers now, or leaves it to the sweep. */
  deliver(): Promise<DeliveryOutcome>;
}

type OutboxDeps = Pick<Deps, "db" | "clock" | "outbox" | "renderPdf" | "emailAttachments" | "publicBaseUrl">;

/** An email for `userId`, queued at `at` (the request's or the job's now). */
export function queueEmail(
  deps: OutboxDeps,
  userId: string,
  email: OutgoingEmail,
  at: string = nowIso(deps),
): QueuedEmail {
  const id = newMessageId(at);
  const key = outboxKey(userId, id);
  const item: OutboxItem = {
    ...key,
    ...dueKeys("outbox", userId, key.sk, at),
    type: "outbox",
    userId,
    id,
    to: email.to,
    subject: email.subject,
    text: email.text,
    ...(email.html ? { html: email.html } : {}),
    fromName: email.fromName ?? null,
    replyTo: email.replyTo ?? null,
    ...(email.attachment ? { attachment: email.attachment } : {}),
    createdAt: at,
    status: "pending",
    attempts: 0,
  };
  return {
    item,
    write: {
      op: { Put: { TableName: deps.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
      onConditionFailed: () => new DomainError("service_unavailable", "could not queue the email; retry"),
    },
    deliver: () => deliverQueued(deps, item),
  };
}

/**
 * Delivers one outbox record at most once: claim, hand over, record the outcome. Never throws:
 * whatever goes wrong is left to the sweep (or to an operator, for a lost claim) — the change that
 * caused the email has already happened.
 */
export async function deliverQueued(deps: OutboxDeps, item: OutboxItem): Promise<DeliveryOutcome> {
  const transport = deps.outbox;
  if (!transport) return "no_transport";
  if (item.attachment && (!deps.renderPdf || !deps.emailAttachments)) return "no_transport";
  const attempt = item.attempts + 1;
  const db = { db: deps.db }; // no commit hook: these writes belong to no request's transaction
  const key = outboxKey(item.userId, item.id);
  const claimedAt = nowIso(deps);
  const claimEnds = onDueList("outbox", item.userId, item.sk, addMs(claimedAt, CLAIM_TIMEOUT_MS));
  try {
    await commit(db, [
      {
        op: {
          Update: {
            TableName: deps.db.table,
            Key: key,
            UpdateExpression: `SET #status = :sending, attempts = :attempt, claimedAt = :now, ${claimEnds.set}`,
            ConditionExpression: "#status = :pending AND attempts = :seen",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ":sending": "sending",
              ":pending": "pending",
              ":attempt": attempt,
              ":seen": item.attempts,
              ":now": claimedAt,
              ...claimEnds.values,
            },
          },
        },
        onConditionFailed: () => new ClaimLost(),
      },
    ]);
  } catch (error) {
    if (!(error instanceof ClaimLost)) log("outbox claim failed", item, error);
    return "skipped"; // another deliverer has it, or it is already done
  }

  let receipt;
  try {
    receipt = await transport.deliver({
      ...toMessage(item),
      attachments: item.attachment ? await deps.emailAttachments!(deps, item) : [],
    });
  } catch (error) {
    log("email delivery failed", item, error);
    await release(deps, item, attempt, error).catch((e: unknown) => log("outbox release failed", item, e));
    return "failed";
  }
  const now = nowIso(deps);
  await commit(db, [
    {
      op: {
        Update: {
          TableName: deps.db.table,
          Key: key,
          UpdateExpression: `SET #status = :sent, sentAt = :now, providerMessageId = :pid, expiresAt = :ttl REMOVE ${OFF_DUE_LIST}`,
          ConditionExpression: "#status = :sending AND attempts = :attempt",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: {
            ":sent": "sent",
            ":sending": "sending",
            ":attempt": attempt,
            ":now": now,
            ":pid": receipt.providerMessageId ?? null,
            ":ttl": expiresAfter(Date.parse(now), KEEP_SENT_SECONDS),
          },
        },
      },
    },
  ]).catch((error: unknown) => log("email delivered but not recorded as sent", item, error));
  return "delivered";
}

/** After a reported failure: back on the due list after 1, 4, 16, 64 minutes; then `failed`. */
async function release(deps: OutboxDeps, item: OutboxItem, attempt: number, error: unknown): Promise<void> {
  const giveUp = attempt >= MAX_ATTEMPTS;
  const retryAt = new Date(deps.clock().getTime() + RETRY_BASE_MS * 4 ** (attempt - 1)).toISOString();
  const due = onDueList("outbox", item.userId, item.sk, retryAt);
  await commit({ db: deps.db }, [
    {
      op: {
        Update: {
          TableName: deps.db.table,
          Key: outboxKey(item.userId, item.id),
          UpdateExpression: giveUp
            ? `SET #status = :failed, lastError = :error, expiresAt = :ttl REMOVE ${OFF_DUE_LIST}`
            : `SET #status = :pending, lastError = :error, ${due.set}`,
          ConditionExpression: "#status = :sending AND attempts = :attempt",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: {
            ":sending": "sending",
            ":attempt": attempt,
            ":error": error instanceof Error ? error.name : "Error",
            ...(giveUp
              ? { ":failed": "failed", ":ttl": expiresAfter(deps.clock().getTime(), KEEP_FAILED_SECONDS) }
              : { ":pending": "pending", ...due.values }),
          },
        },
      },
    },
  ]);
  if (giveUp) countMetric(METRIC.emailsFailed);
}

/**
 * A record left `sending` past its claim: its deliverer died between the claim and the transport's
 * answer. Marked `failed` (DeliveryInterrupted), conditioned on that very claim, so a deliverer that
 * is merely slow and marks it sent first wins, and two sweeps reclaim it once. Never sent again here:
 * at most once (above).
 */
async function reclaim(deps: OutboxDeps, item: OutboxItem, now: string): Promise<boolean> {
  if (item.status !== "sending" || !item.claimedAt || addMs(item.claimedAt, CLAIM_TIMEOUT_MS) > now) return false;
  try {
    await commit({ db: deps.db }, [
      {
        op: {
          Update: {
            TableName: deps.db.table,
            Key: outboxKey(item.userId, item.id),
            UpdateExpression: `SET #status = :failed, lastError = :error, expiresAt = :ttl REMOVE ${OFF_DUE_LIST}`,
            ConditionExpression: "#status = :sending AND attempts = :attempt AND claimedAt = :claimedAt",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ":failed": "failed",
              ":ttl": expiresAfter(deps.clock().getTime(), KEEP_FAILED_SECONDS),
              ":sending": "sending",
              ":attempt": item.attempts,
              ":claimedAt": item.claimedAt,
              ":error": DELIVERY_INTERRUPTED,
            },
          },
        },
        onConditionFailed: () => new ClaimLost(),
      },
    ]);
  } catch (error) {
    if (!(error instanceof ClaimLost)) log("outbox reclaim failed", item, error);
    return false;
  }
  logLine("warn", "email reclaimed as failed: its deliverer stopped mid-send", { outboxId: item.id });
  countMetric(METRIC.emailsReclaimed);
  countMetric(METRIC.emailsFailed);
  return true;
}

/** The lastError of an email whose delivery was cut off: SES may or may not have taken it. */
export const DELIVERY_INTERRUPTED = "DeliveryInterrupted";

const addMs = (iso: string, ms: number): string => new Date(Date.parse(iso) + ms).toISOString();

/**
 * The sweep: delivers every pending record whose time has come, and reclaims those left `sending`
 * past their claim. `now` is the job's "now"; the wall clock is taken too when later, because
 * delivery is not business time — a job run with an old `--now` still flushes what is waiting.
 * It dispatches the outbox due list to the `outbox` queue (queue/dispatch.ts), whose workers
 * (outboxWorker) deliver: so the sweep is a quick read wherever it runs, and never waits behind
 * another job's backlog. In process it waits for the workers and returns what they did.
 */
export async function sweepOutbox(
  deps: Deps,
  now: string,
  options: { deadline?: number } = {},
): Promise<{ delivered: number; failed: number; reclaimed: number }> {
  if (!deps.outbox && !deps.workQueue) return { delivered: 0, failed: 0, reclaimed: 0 };
  const clockNow = nowIso(deps);
  const bound = clockNow > now ? clockNow : now;
  const run = await dispatchDue(deps, {
    job: "outbox",
    queue: "outbox",
    now: bound,
    worker: outboxWorker,
    deadline: options.deadline,
  });
  const { delivered = 0, failed = 0, reclaimed = 0 } = run.tally;
  return { delivered, failed, reclaimed };
}

/**
 * The `outbox` queue's worker: each message names one outbox record, handed over by the sweep or by
 * the stream subscriber on the record's insert. It reads the record (consistent) and, if its time
 * has come, delivers it (pending) or reclaims it (`sending` past its claim); anything else — sent,
 * failed, not yet due, claimed by another deliverer — is `skipped`. deliverQueued's claim makes a
 * message given twice, or a sweep racing the subscriber, deliver it once.
 */
export const outboxWorker = dueWorker(
  "outbox",
  async (deps, key, message) => {
    const out = await deps.db.doc.send(new GetCommand({ TableName: deps.db.table, Key: key, ConsistentRead: true }));
    const item = out.Item as OutboxItem | undefined;
    const clockNow = nowIso(deps);
    const bound = clockNow > message.now ? clockNow : message.now;
    if (!item || !isDueEntry("outbox", item, bound)) return "skipped";
    if (item.status === "sending") return (await reclaim(deps, item, bound)) ? "reclaimed" : "skipped";
    if (item.status !== "pending") return "skipped";
    return deliverQueued(deps, item);
  },
  () => undefined,
);

function toMessage(item: OutboxItem): EmailMessage {
  return {
    id: item.id,
    to: item.to,
    subject: item.subject,
    text: item.text,
    ...(item.html ? { html: item.html } : {}),
    fromName: item.fromName ?? null,
    replyTo: item.replyTo ?? null,
    createdAt: item.createdAt,
    userId: item.userId,
  };
}

class ClaimLost extends Error {}

function log(message: string, item: OutboxItem, error: unknown): void {
  // The record's id only: addresses and contents stay out of logs.
  logLine("warn", message, { outboxId: item.id, ...errorFields(error) });
}
