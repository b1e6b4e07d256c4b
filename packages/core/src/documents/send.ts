import { findClient } from "../clients/clients";
import type { Ctx } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { withIndexKeys } from "../db/keys";
import { optimistic, Raced } from "../db/optimistic";
import { putIfVersion } from "../db/versioning";
import { queueEmail, type OutgoingEmail } from "../email/outbox";
import { EmailQuotaRaced, reserveEmails } from "../email/quota";
import { DomainError, invalidTransition, notFound } from "../errors";
import { getDocument, type DocumentRules } from "./editing";
import type { DocumentItem } from "./item";
import { peppolSendWrites } from "../peppol/delivery";
import type { PeppolDocumentKind } from "../capabilities/peppol-provider";

/** What `send` reads of a document (an invoice, an estimate, a credit note). */
type SendableItem = Pick<DocumentItem, "pk" | "sk" | "id" | "status" | "version" | "clientId" | "clientEmail">;

/** What `send` sets on every document; the rest of the document stays as it is. */
interface Sent {
  status: string;
  recipient?: string | null;
  sentAt?: string | null;
}

export interface SendOptions {
  /** The recipient of this send (and of an invoice's reminders); changes no client data. */
  to?: string;
  /**
   * Sent over Peppol instead of by email (API.md section 19): the buyer's Peppol identifier the
   * checks found reachable (functions/src/routes/peppol.ts, peppolSendChecks). No email and no quota;
   * the delivery record instead (peppol/delivery.ts).
   */
  peppol?: { kind: PeppolDocumentKind; receiver: string };
}

export interface SendRules<T extends SendableItem & Sent> extends Pick<DocumentRules, "kind" | "noun"> {
  /** The status a send starts from (an invoice is sent once finalized, an estimate from its draft). */
  from: string;
  /**
   * The status after it: `sent`, or (a credit note, which may be sent again and again) the one it
   * started from.
   */
  to?: string;
  /** What the document takes on when it is issued by the send (an estimate: its parties, frozen). */
  issue?: (ctx: Ctx, current: T) => Promise<Partial<T>>;
  /** What follows from the sent document (an invoice: its pay link). */
  finish?: (ctx: Ctx, next: T) => Partial<T>;
  /** The email; async when it needs more than the document (a credit note: its invoice's date). */
  email: (ctx: Ctx, next: T, recipient: string) => OutgoingEmail | Promise<OutgoingEmail>;
  /** More writes of the same transaction (an invoice: its reminder schedule). */
  alsoWrites?: (ctx: Ctx, next: T) => Write[];
}

/**
 * `send`, for invoices, estimates and credit notes alike: `from` → sent (a credit note stays issued:
 * `to`), recording sentAt and the recipient — the
 * `to` given, else the client's email as the document holds it, else (it had none) the client's
 * current one. The email is queued in the outbox, and counted against the email quota, in the SAME
 * transaction as the status change (email/quota.ts): the document is sent if and only if its email
 * exists and was counted; past the quota nothing changes. The write is conditioned on the version
 * read, so an edit meanwhile is sent as it is now and another send meanwhile makes this one an
 * invalid_transition; a lost race on the quota reads again too (db/optimistic.ts). Delivery is the
 * stream subscriber's: the outbox record's insert triggers it (docs/events.md).
 */
export function sendDocument<T extends SendableItem & Sent>(
  ctx: Ctx,
  rules: SendRules<T>,
  id: number,
  to?: string,
  peppol?: SendOptions["peppol"],
): Promise<T> {
  const wrongState = (current: Record<string, unknown>) =>
    invalidTransition(`${rules.noun} ${id}`, String(current.status), "send");
  const round = async (): Promise<T> => {
    const current = await getDocument<T>(ctx, rules, id, true);
    if (current.status !== rules.from) throw wrongState(current as unknown as Record<string, unknown>);
    const issued: T = { ...current, ...(await rules.issue?.(ctx, current)) };
    const recipient = to ?? issued.clientEmail ?? (await findClient(ctx, current.clientId))?.email ?? null;
    if (peppol) return sendByPeppol(ctx, rules, current, issued, recipient, peppol);
    if (!recipient) {
      throw new DomainError(
        "client_email_missing",
        `${rules.noun} ${id} has no recipient: give "to" or set the client's email`,
      );
    }
    const now = nowIso(ctx);
    // Before anything else happens (an email rendered, a write): past the quota, send changes nothing.
    const quota = await reserveEmails(ctx, ctx.userId, now);
    const sent: T = {
      ...issued,
      status: rules.to ?? "sent",
      sentAt: now,
      recipient,
      updatedAt: now,
      version: current.version + 1,
    };
    const next = withIndexKeys({ ...sent, ...rules.finish?.(ctx, sent) });
    const email = queueEmail(ctx, ctx.userId, await rules.email(ctx, next, recipient), now);
    const writes: Write[] = [
      {
        op: putIfVersion(ctx.db.table, next, current.version, [rules.from]),
        onConditionFailed: (old) => {
          if (!old) return notFound(rules.noun, id);
          if (old.status !== rules.from) return wrongState(old);
          return new Raced(); // edited meanwhile: send what it is now
        },
      },
      ...(rules.alsoWrites?.(ctx, next) ?? []),
      email.write,
      quota, // counted with the email it queues
    ];
    await commit(ctx, writes, next);
    return next;
  };
  return optimistic(rules.noun, round, { alsoRaced: (error) => error instanceof EmailQuotaRaced });
}

/**
 * The Peppol send: the same state change as by email (status, sentAt, what `finish` and `alsoWrites`
 * add: an invoice's pay link and reminders, which go to the recipient's email when there is one),
 * with `peppolDelivery` pending and the delivery record in the same transaction instead of an
 * email. The hand-over itself is the `peppol` queue's worker's, handed the record by the stream
 * subscriber (peppol/delivery.ts), never the request's.
 */
async function sendByPeppol<T extends SendableItem & Sent>(
  ctx: Ctx,
  rules: SendRules<T>,
  current: T,
  issued: T,
  recipient: string | null,
  peppol: NonNullable<SendOptions["peppol"]>,
): Promise<T> {
  const now = nowIso(ctx);
  const handOver = peppolSendWrites(ctx.userId, peppol.kind, current.id, peppol.receiver, now, ctx.db.table);
  const sent: T = {
    ...issued,
    status: rules.to ?? "sent",
    sentAt: now,
    recipient,
    peppolDelivery: handOver.delivery,
    updatedAt: now,
    version: current.version + 1,
  };
  const next = withIndexKeys({ ...sent, ...rules.finish?.(ctx, sent) });
  const writes: Write[] = [
    {
      op: putIfVersion(ctx.db.table, next, current.version, [rules.from]),
      onConditionFailed: (old) => {
        if (!old) return notFound(rules.noun, current.id);
        if (old.status !== rules.from)
          return invalidTransition(`${rules.noun} ${current.id}`, String(old.status), "send");
        return new Raced();
      },
    },
    ...(rules.alsoWrites?.(ctx, next) ?? []),
    handOver.write,
  ];
  await commit(ctx, writes, next);
  return next;
}
