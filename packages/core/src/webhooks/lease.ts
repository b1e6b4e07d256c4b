import { randomUUID } from "node:crypto";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { DeleteCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { Deps } from "../deps";
import { pad, userPk } from "../db/keys";

/**
 * One attempt in flight per endpoint across every worker (docs/events.md, "Fairness"). Before an
 * attempt, its worker takes the endpoint's lease: one small item beside the endpoint, put on the
 * condition that nobody holds it (absent, or its time is up). After the attempt it deletes it,
 * conditioned on its own token. A worker that dies holding it leaves it to expire.
 *
 * A worker that finds the lease held does not wait for it: it leaves the attempt pending, due as it
 * was, for the next run of the `webhooks` job. So a slow receiver's backlog waits on that receiver,
 * never on a worker slot another user's attempt needs.
 *
 * The sort key is not one the stream filter lets through (stream/filter.ts): taking and giving back
 * a lease invokes no subscriber. The times are the wall clock's (Date.now), never a job's `now`:
 * a lease is about requests in flight now.
 */
const SK_PREFIX = "WEBHOOK_LEASE#";
/** Beyond the attempt's timeout: the claim, the endpoint and event reads and the record writes. */
const LEASE_MARGIN_MS = 20_000;

export interface EndpointLease {
  release(): Promise<void>;
}

export const leaseKey = (userId: string, endpointId: number) => ({
  pk: userPk(userId),
  sk: `${SK_PREFIX}${pad(endpointId)}`,
});

/** Takes the endpoint's lease for one attempt of at most `attemptMs`; undefined if another holds it. */
export async function takeEndpointLease(
  deps: Pick<Deps, "db">,
  userId: string,
  endpointId: number,
  attemptMs: number,
): Promise<EndpointLease | undefined> {
  const key = leaseKey(userId, endpointId);
  const token = randomUUID();
  const now = Date.now();
  const leaseUntil = now + attemptMs + LEASE_MARGIN_MS;
  try {
    await deps.db.doc.send(
      new PutCommand({
        TableName: deps.db.table,
        Item: { ...key, token, leaseUntil, expiresAt: Math.ceil(leaseUntil / 1000) },
        ConditionExpression: "attribute_not_exists(pk) OR leaseUntil < :now",
        ExpressionAttributeValues: { ":now": now },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
  return {
    async release() {
      try {
        await deps.db.doc.send(
          new DeleteCommand({
            TableName: deps.db.table,
            Key: key,
            ConditionExpression: "#token = :token",
            ExpressionAttributeNames: { "#token": "token" },
            ExpressionAttributeValues: { ":token": token },
          }),
        );
      } catch (error) {
        // It ran out and another worker holds it now: theirs to give back.
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    },
  };
}
