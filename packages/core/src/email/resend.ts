import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit } from "../db/commit";
import { DomainError, notFound } from "../errors";
import { toDelivery } from "./deliveries";
import { outboxKey, queueEmail, type OutboxItem } from "./outbox";
import type { EmailDelivery } from "./resource";

/**
 * Sending a failed email again (POST /email-deliveries/{id}/resend, `npm run jobs -- resend-email`;
 * docs/operations.md). The outbox never resends by itself (at most once: outbox.ts), so an email
 * that failed — SES refused it five times, or its delivery was cut off mid-send and it was
 * reclaimed — is sent again only when someone asks, knowing that an interrupted one may have
 * arrived after all.
 *
 * The resend is a NEW outbox record, a copy of the failed one (recipient, subject, body, the
 * attachment's reference with its figures as of the original send, drawn at delivery), queued in
 * ONE transaction with a mark on the old record (`resentAs`, conditioned on it being failed and not
 * yet resent): the stream subscriber delivers the copy at once, like any new email, and the history
 * keeps both. So one failed email is resent at most once; a resend that fails too can be resent in
 * its turn. It counts toward no quota: it replaces an email that never went out.
 *
 * Only `failed`: an email SES bounced, or whose recipient complained, or SES rejected
 * (`bounced`/`complained`/`rejected`) would fail the same way and harm the sender's reputation; a
 * pending, sending or sent one is not failed. Those are 422 invalid_transition, as the state
 * machines answer elsewhere.
 */
type StoredOutbox = OutboxItem & { delivery?: string; resentAs?: string };

export async function resendEmail(ctx: Ctx, id: string): Promise<EmailDelivery> {
  if (!/^[0-9TZ]{18,}-[0-9a-f]{16}$/.test(id)) throw notFound("email", id);
  const out = await ctx.db.doc.send(
    new GetCommand({ TableName: ctx.db.table, Key: outboxKey(ctx.userId, id), ConsistentRead: true }),
  );
  const failed = out.Item as StoredOutbox | undefined;
  if (!failed) throw notFound("email", id);
  refuseUnlessResendable(failed);

  const copy = queueEmail(ctx, ctx.userId, {
    to: failed.to,
    subject: failed.subject,
    text: failed.text,
    ...(failed.html ? { html: failed.html } : {}),
    fromName: failed.fromName ?? null,
    replyTo: failed.replyTo ?? null,
    ...(failed.attachment ? { attachment: failed.attachment } : {}),
  });
  const at = nowIso(ctx);
  await commit(
    ctx,
    [
      copy.write,
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: outboxKey(ctx.userId, id),
            UpdateExpression: "SET resentAs = :copy, resentAt = :at",
            ConditionExpression:
              "#status = :failed AND attribute_not_exists(resentAs) AND attribute_not_exists(delivery)",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":copy": copy.item.id, ":failed": "failed", ":at": at },
          },
        },
        // Changed since the read (resent by a concurrent call, or reported by SES): say what it is now.
        onConditionFailed: (current) => resendRefusal((current as StoredOutbox | undefined) ?? failed),
      },
    ],
    toDelivery(copy.item),
  );
  return toDelivery(copy.item);
}

function refuseUnlessResendable(item: StoredOutbox): void {
  if (item.status !== "failed" || item.delivery || item.resentAs) throw resendRefusal(item);
}

function resendRefusal(item: StoredOutbox): DomainError {
  if (item.resentAs)
    return new DomainError("invalid_transition", `email ${item.id} was already resent as ${item.resentAs}`);
  const status = item.delivery ?? item.status;
  return new DomainError("invalid_transition", `cannot resend a ${status} email; only a failed one`);
}
