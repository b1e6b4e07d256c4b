// Redelivery of an event to an endpoint: by its owner through the API, or at once by the operator.

import { GetCommand, QueryCommand, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import type { Ctx, Deps } from "../deps";
import { nowIso } from "../deps";
import { commit } from "../db/commit";
import { onDueList, userPk } from "../db/keys";
import { DomainError, notFound } from "../errors";
import type { EventItem } from "../events/store";
import {
  attemptsPrefix,
  pendingAttempt,
  putAttempt,
  readEvent,
  runAttempt,
  toDelivery,
  type AttemptItem,
  type Delivery,
} from "./deliveries";
import { getEndpoint } from "./endpoints";

/**
 * Redeliver (docs/events.md, "Redelivering"): the event again, to an endpoint it was sent to.
 * - Its automatic retry is pending (the receiver is fixed and should not wait hours): that retry is
 *   moved to now, keeping its place in the schedule — no second copy.
 * - Its attempts are over (succeeded, or failed and given up): one more attempt, due now, made once
 *   (`redelivery`: not retried by itself).
 * - An attempt is in flight, or a redelivery of it is pending already: 422 invalid_transition.
 * The `webhooks` job makes it (the operator's command line at once). The endpoint must be enabled.
 * The event is looked for among the endpoint's attempts, newest first (a redelivery is rare, and
 * the attempts kept are 30 days').
 */
const REDELIVERY_SEARCH_PAGES = 10;

export async function redeliver(ctx: Ctx, endpointId: number, eventId: string): Promise<AttemptItem> {
  const endpoint = await getEndpoint(ctx, endpointId);
  const latest = await latestAttempt(ctx, ctx.userId, endpointId, eventId);
  if (!latest) throw notFound("delivery of event", eventId);
  if (!endpoint.enabled)
    throw new DomainError("invalid_transition", "the endpoint is disabled: enable it (PATCH enabled: true) first");
  const inFlight = () => new DomainError("invalid_transition", "an attempt of this event is in flight already");
  if (latest.status === "sending" || (latest.status === "pending" && latest.redelivery)) throw inFlight();
  const now = nowIso(ctx);
  if (latest.status === "pending") {
    const due = onDueList("webhooks", latest.userId, latest.sk, now);
    const moved = { ...latest, ...due.keys, nextAttemptAt: now };
    await commit(ctx, [
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: { pk: latest.pk, sk: latest.sk },
            UpdateExpression: `SET ${due.set}, nextAttemptAt = :now`,
            ConditionExpression: "#status = :pending AND claims = :claims",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ...due.values,
              ":now": now,
              ":pending": "pending",
              ":claims": latest.claims,
            },
          },
        },
        onConditionFailed: inFlight,
      },
    ]);
    return moved;
  }
  if (!(await readEvent(ctx, latest))) throw notFound("event", eventId);
  const item: AttemptItem = {
    ...pendingAttempt(
      { pk: latest.pk, sk: latest.eventSk, id: latest.eventId, type: latest.type } as EventItem,
      endpointId,
      latest.attempt + 1,
      now,
    ),
    redelivery: true,
  };
  await commit(ctx, [{ ...putAttempt(ctx, item), onConditionFailed: inFlight }]);
  return item;
}

async function latestAttempt(
  deps: Pick<Deps, "db">,
  userId: string,
  endpointId: number,
  eventId: string,
): Promise<AttemptItem | undefined> {
  let startKey: Record<string, unknown> | undefined;
  for (let page = 0; page < REDELIVERY_SEARCH_PAGES; page++) {
    const out: QueryCommandOutput = await deps.db.doc.send(
      new QueryCommand({
        TableName: deps.db.table,
        KeyConditionExpression: "pk = :p AND begins_with(sk, :s)",
        FilterExpression: "eventId = :e",
        ExpressionAttributeValues: { ":p": userPk(userId), ":s": attemptsPrefix(endpointId), ":e": eventId },
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      }),
    );
    const found = (out.Items ?? []) as AttemptItem[];
    // Newest due first: the latest attempt (a retry is always due after the attempt before it).
    if (found.length > 0) return found.reduce((a, b) => (b.attempt > a.attempt ? b : a));
    startKey = out.LastEvaluatedKey;
    if (!startKey) return undefined;
  }
  return undefined;
}

/**
 * The operator's redelivery (`npm run jobs -- redeliver-webhook`): the same checks and new attempt
 * as the endpoint's owner gets through the API, then the attempt itself at once. Returns the
 * attempt as `GET …/deliveries` lists it.
 */
export async function redeliverNow(deps: Deps, userId: string, endpointId: number, eventId: string): Promise<Delivery> {
  const item = await redeliver({ ...deps, userId }, endpointId, eventId);
  await runAttempt(deps, item);
  const out = await deps.db.doc.send(new GetCommand({ TableName: deps.db.table, Key: { pk: item.pk, sk: item.sk } }));
  return toDelivery(out.Item as AttemptItem);
}
