import type { Deps } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { userPk } from "../db/keys";
import { outboxKey } from "./outbox";
import type { DeliveryProblem } from "./resource";

/**
 * What SES reports after it took an email: a bounce (the receiving server refused it, or SES gave up),
 * a complaint (the recipient marked it as spam) or a reject (SES would not send it). Deployed, SES
 * publishes these for every email sent with the stage's configuration set to an SNS topic
 * (infra/email.ts); a small function hands each to recordFeedback().
 *
 * Every email carries two SES message tags that lead back to its outbox record: the outbox id and
 * the user (base64url, as tag values allow only letters, digits, `_` and `-`). Tags are not part of
 * the message, so recipients never see them.
 *
 * What is marked (docs/email-and-public-pages.md, "Bounces and complaints"):
 * - the outbox record: `delivery` = bounced | complained | rejected, with `deliveryDetail` (the bounce
 *   type, e.g. "Permanent/NoEmail") and `deliveryAt`; its `status` stays `sent` (SES did take it);
 * - the recipient, per user: RECIPIENT#<address> with the same three fields, so the user can see
 *   which client addresses do not receive mail.
 * Writes only set fields, so the same event delivered twice (SNS delivers at least once) changes
 * nothing the second time.
 */
const FEEDBACK_TAG = { outbox: "invoicing-outbox", user: "invoicing-user" } as const;

/** The SendEmail `EmailTags` that let a bounce find its outbox record. */
export function feedbackTags(userId: string, outboxId: string): { Name: string; Value: string }[] {
  return [
    { Name: FEEDBACK_TAG.outbox, Value: outboxId },
    { Name: FEEDBACK_TAG.user, Value: Buffer.from(userId, "utf8").toString("base64url") },
  ];
}

export type { DeliveryProblem };

interface EmailFeedback {
  problem: DeliveryProblem;
  /** e.g. "Permanent/NoEmail", "Transient/MailboxFull", "abuse", "Bad content". */
  detail: string;
  /** When SES saw it (ISO 8601). */
  at: string;
  outboxId: string;
  userId: string;
  /** The addresses concerned, lowercased. */
  recipients: string[];
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === "string" && value ? value : undefined);

/**
 * An SES event-publishing record (the JSON SES puts in the SNS message) reduced to what is marked;
 * null for any other event type, or an email that is not one of ours (no or malformed tags).
 */
export function parseSesEvent(event: unknown): EmailFeedback | null {
  if (!isObject(event) || !isObject(event.mail)) return null;
  const tags = isObject(event.mail.tags) ? event.mail.tags : {};
  const tag = (name: string) => (Array.isArray(tags[name]) ? text(tags[name][0]) : undefined);
  const outboxId = tag(FEEDBACK_TAG.outbox);
  const encodedUser = tag(FEEDBACK_TAG.user);
  if (!outboxId || !encodedUser || !/^[A-Za-z0-9_-]+$/.test(encodedUser)) return null;
  const userId = Buffer.from(encodedUser, "base64url").toString("utf8");
  if (!userId) return null;
  const addresses = (list: unknown, field: string): string[] =>
    Array.isArray(list)
      ? list.flatMap((r) => (isObject(r) && text(r[field]) ? [text(r[field])!.toLowerCase()] : []))
      : [];
  const eventType = text(event.eventType) ?? text(event.notificationType);
  const fallbackAt = text(event.mail.timestamp) ?? new Date(0).toISOString();
  const destination = Array.isArray(event.mail.destination)
    ? event.mail.destination.flatMap((a) => (text(a) ? [text(a)!.toLowerCase()] : []))
    : [];
  if (eventType === "Bounce" && isObject(event.bounce)) {
    const b = event.bounce;
    return {
      problem: "bounced",
      detail: [text(b.bounceType), text(b.bounceSubType)].filter(Boolean).join("/") || "Undetermined",
      at: text(b.timestamp) ?? fallbackAt,
      outboxId,
      userId,
      recipients: addresses(b.bouncedRecipients, "emailAddress"),
    };
  }
  if (eventType === "Complaint" && isObject(event.complaint)) {
    const c = event.complaint;
    return {
      problem: "complained",
      detail: text(c.complaintFeedbackType) ?? "complaint",
      at: text(c.timestamp) ?? fallbackAt,
      outboxId,
      userId,
      recipients: addresses(c.complainedRecipients, "emailAddress"),
    };
  }
  if (eventType === "Reject" && isObject(event.reject)) {
    return {
      problem: "rejected",
      detail: text(event.reject.reason) ?? "rejected",
      at: fallbackAt,
      outboxId,
      userId,
      recipients: destination,
    };
  }
  return null;
}

/**
 * A recipient's mark is kept 90 days after its latest report (each report sets it again). Nothing in
 * the service reads it to decide anything (SES's own suppression list stops hard bounces); it tells
 * an operator or the user's support which address does not receive mail, and outlives the email it
 * came with (kept 30 days after delivery) by two months. An address that bounces again is marked again.
 */
export const KEEP_RECIPIENT_SECONDS = 90 * 86_400;

export const recipientKey = (userId: string, address: string) => ({
  pk: userPk(userId),
  sk: `RECIPIENT#${address.toLowerCase()}`,
});

type FeedbackOutcome = "recorded" | "email_gone";

/**
 * Marks the email and its recipients, in one transaction. An outbox record that no longer exists
 * (kept 30 days after delivery) still gets its recipients marked.
 */
export async function recordFeedback(
  deps: Pick<Deps, "db" | "clock">,
  feedback: EmailFeedback,
): Promise<FeedbackOutcome> {
  const table = deps.db.table;
  const values = { ":problem": feedback.problem, ":detail": feedback.detail.slice(0, 200), ":at": feedback.at };
  const names = { "#delivery": "delivery" };
  const recipients: Write[] = [...new Set(feedback.recipients)].map((address) => ({
    op: {
      Update: {
        TableName: table,
        Key: recipientKey(feedback.userId, address),
        UpdateExpression:
          "SET #delivery = :problem, deliveryDetail = :detail, deliveryAt = :at, address = :address, " +
          "#type = :type, updatedAt = :now, expiresAt = :ttl",
        ExpressionAttributeNames: { ...names, "#type": "type" },
        ExpressionAttributeValues: {
          ...values,
          ":address": address,
          ":type": "recipient",
          ":now": nowIso(deps),
          ":ttl": Math.floor(deps.clock().getTime() / 1000) + KEEP_RECIPIENT_SECONDS,
        },
      },
    },
  }));
  const email: Write = {
    op: {
      Update: {
        TableName: table,
        Key: outboxKey(feedback.userId, feedback.outboxId),
        UpdateExpression: "SET #delivery = :problem, deliveryDetail = :detail, deliveryAt = :at",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    onConditionFailed: () => new EmailGone(),
  };
  try {
    await commit({ db: deps.db }, [email, ...recipients]);
    return "recorded";
  } catch (error) {
    if (!(error instanceof EmailGone)) throw error;
    if (recipients.length > 0) await commit({ db: deps.db }, recipients);
    return "email_gone";
  }
}

class EmailGone extends Error {}

/** SNS's event as it invokes the feedback function: each record's Message is an SES event (JSON). */
export interface FeedbackNotices {
  Records?: { Sns: { Message: string } }[];
}

/**
 * Every SES event an SNS invocation carries, recorded (the feedback Lambda, and the replay of its
 * failures: `npm run jobs -- replay-email-feedback-failures`). What is not such an event, or not
 * about one of our emails, is counted and skipped; a database failure throws (the delivery is tried
 * again; marking twice is harmless).
 */
export async function recordFeedbackNotices(
  deps: Pick<Deps, "db" | "clock">,
  event: FeedbackNotices,
): Promise<{ recorded: number; emailGone: number; ignored: number }> {
  const counts = { recorded: 0, emailGone: 0, ignored: 0 };
  for (const record of event.Records ?? []) {
    let message: unknown;
    try {
      message = JSON.parse(record.Sns.Message);
    } catch {
      counts.ignored++;
      continue;
    }
    const feedback = parseSesEvent(message);
    if (!feedback) {
      counts.ignored++;
      continue;
    }
    const outcome = await recordFeedback(deps, feedback);
    if (outcome === "recorded") counts.recorded++;
    else counts.emailGone++;
  }
  return counts;
}
