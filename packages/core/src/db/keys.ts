/**
 * The single-table key design (docs/data-model.md explains each access pattern).
 * Every record of a user lives in partition USER#<userId>; sort keys are <KIND>#<10-digit id> so a
 * descending Query lists newest first. Filters and jobs use the sparse GSIs of table-definition.ts.
 */
import { createHash } from "node:crypto";

export type Kind = "CLIENT" | "INVOICE" | "ESTIMATE" | "SCHEDULE" | "APIKEY";

export const ID_WIDTH = 10;
export const pad = (id: number): string => id.toString().padStart(ID_WIDTH, "0");

export const userPk = (userId: string): string => `USER#${userId}`;
export const entitySk = (kind: Kind, id: number): string => `${kind}#${pad(id)}`;
export const entityKey = (userId: string, kind: Kind, id: number) => ({ pk: userPk(userId), sk: entitySk(kind, id) });

/** byStatus index attributes: a user's records of one kind in one status, by id. */
export const statusIndexKeys = (userId: string, kind: Kind, status: string, id: number) => ({
  gsi1pk: statusPartition(userId, kind, status),
  gsi1sk: pad(id),
});
export const statusPartition = (userId: string, kind: Kind, status: string): string =>
  `${userPk(userId)}#${kind}#STATUS#${status}`;

/** byClient index attributes: a user's records of one kind for one client, by id. */
export const clientIndexKeys = (userId: string, kind: Kind, clientId: number, id: number) => ({
  gsi2pk: clientPartition(userId, kind, clientId),
  gsi2sk: pad(id),
});
export const clientPartition = (userId: string, kind: Kind, clientId: number): string =>
  `${userPk(userId)}#${kind}#CLIENT#${clientId}`;

/**
 * byDue index: a record waiting for a job carries duePk/dueSk; the job queries every shard for
 * dueSk up to "now" and removes the attributes when it is done, so a job reads only what is due.
 * Sharding spreads a busy day's due items over several partitions.
 */
export type DueJob = "overdue" | "recurring" | "reminders" | "expire-estimates" | "outbox" | "webhooks";
export const DUE_SHARDS = 4;

export function dueShard(userId: string, sk: string): number {
  return createHash("sha1").update(`${userId}#${sk}`).digest()[0]! % DUE_SHARDS;
}

export const dueKeys = (job: DueJob, userId: string, sk: string, at: string) => ({
  duePk: duePartition(job, dueShard(userId, sk)),
  dueSk: `${at}#${userId}#${sk}`,
});
export const duePartition = (job: DueJob, shard: number): string => `DUE#${job}#${shard}`;

export const counterKey = (userId: string, counter: string) => ({ pk: userPk(userId), sk: `COUNTER#${counter}` });

/**
 * The key and index attributes of a user's listed record (invoice, estimate, schedule): its own
 * key, the byStatus and byClient entries, and the byDue entry while a job waits for it.
 */
export interface IndexedItem {
  pk: string;
  sk: string;
  userId: string;
  gsi1pk: string;
  gsi1sk: string;
  gsi2pk: string;
  gsi2sk: string;
  duePk?: string;
  dueSk?: string;
}
