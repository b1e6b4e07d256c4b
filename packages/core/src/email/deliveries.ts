import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx } from "../deps";
import { userPk } from "../db/keys";
import type { OutboxItem } from "./outbox";
import type { DeliveryProblem, EmailDelivery } from "./resource";

/**
 * What became of the user's emails (GET /email-deliveries; docs/email-and-public-pages.md): the
 * latest 100, newest first, each with one status that says it all. An email SES bounced, or whose
 * recipient complained, or that SES rejected, shows that instead of `sent`; one the outbox gave up on
 * (e.g. SES's sandbox refusing an unverified recipient, five times) is `failed`, with the error's name.
 * A short, bounded list like the webhook deliveries: not paginated.
 */
export type { EmailDelivery };

const MAX_LISTED_DELIVERIES = 100;

interface StoredFeedback {
  delivery?: DeliveryProblem;
  deliveryDetail?: string;
  deliveryAt?: string;
}

export function toDelivery(item: OutboxItem & StoredFeedback): EmailDelivery {
  return {
    id: item.id,
    to: item.to,
    subject: item.subject,
    status: item.delivery ?? item.status,
    createdAt: item.createdAt,
    sentAt: item.sentAt ?? null,
    detail: item.deliveryDetail ?? item.lastError ?? null,
    reportedAt: item.deliveryAt ?? null,
  };
}

export async function listEmailDeliveries(ctx: Pick<Ctx, "db" | "userId">): Promise<EmailDelivery[]> {
  const out = await ctx.db.doc.send(
    new QueryCommand({
      TableName: ctx.db.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :outbox)",
      ExpressionAttributeValues: { ":pk": userPk(ctx.userId), ":outbox": "OUTBOX#" },
      // Outbox ids start with their queue time: descending is newest first.
      ScanIndexForward: false,
      Limit: MAX_LISTED_DELIVERIES,
    }),
  );
  return (out.Items ?? []).map((item) => toDelivery(item as OutboxItem & StoredFeedback));
}
