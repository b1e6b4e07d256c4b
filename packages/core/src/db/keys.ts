/**
 * The single-table key design (docs/data-model.md explains each access pattern).
 * Every record of a user lives in partition USER#<userId>; sort keys are <KIND>#<10-digit id> so a
 * descending Query lists newest first. Filters and jobs use the sparse GSIs of table-definition.ts.
 */
import { createHash } from "node:crypto";

export type Kind = "CLIENT" | "INVOICE" | "ESTIMATE" | "SCHEDULE" | "CREDITNOTE" | "APIKEY";

const ID_WIDTH = 10;
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
const clientIndexKeys = (userId: string, kind: Kind, clientId: number, id: number) => ({
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
export type DueJob = "overdue" | "recurring" | "reminders" | "expire-estimates" | "outbox" | "webhooks" | "peppol";
/**
 * Partitions per due list (docs/data-model.md, "How many due-list shards"). Each index partition
 * takes ~1,000 write units a second, and its sort keys rise with time, so DynamoDB cannot split it
 * further; an email's outbox entry is written 4 times (put, claim's move = delete + put, delete), so
 * 16 shards carry ~4,000 emails a second: above the SES rates AWS grants (tens to hundreds a
 * second) and above what the account's Lambda concurrency left to workers could send (~500
 * executions × ~5 items a second), so the list's back-pressure never throttles users' writes first.
 * It may only grow: the readers query shards 0..DUE_SHARDS-1, so an entry written under a smaller
 * count (shard = hash mod the old count) is still read, and is moved or removed by its stored keys.
 * A power of two, so `byte mod DUE_SHARDS` spreads evenly.
 */
export const DUE_SHARDS = 16;

/**
 * When an item on a job's list is due, against the job's `now`: at its time, or only after it. The
 * overdue rule lives here: a sent invoice is overdue once its dueDate is strictly earlier than now
 * (as an estimate expires after its validUntil); the other jobs act at their time. The jobs' reads
 * (due.ts dueItems) and any other code deciding the same (payments/settlement.ts) ask isDue.
 */
const DUE_AT_TIME: Record<DueJob, boolean> = {
  overdue: false,
  "expire-estimates": false,
  recurring: true,
  reminders: true,
  outbox: true,
  webhooks: true,
  peppol: true,
};
export const dueAtItsTime = (job: DueJob): boolean => DUE_AT_TIME[job];
/** Whether an item on `job`'s list at `at` is due at `now` (ISO times compare as strings). */
export const isDue = (job: DueJob, at: string, now: string): boolean => (DUE_AT_TIME[job] ? at <= now : at < now);

function dueShard(userId: string, sk: string): number {
  return createHash("sha1").update(`${userId}#${sk}`).digest()[0]! % DUE_SHARDS;
}

export const dueKeys = (job: DueJob, userId: string, sk: string, at: string) => ({
  duePk: duePartition(job, dueShard(userId, sk)),
  dueSk: `${at}#${userId}#${sk}`,
});
export const duePartition = (job: DueJob, shard: number): string => `DUE#${job}#${shard}`;

/** Every partition of `job`'s due list (a job reads them all; the entry's shard is dueKeys'). */
export const duePartitions = (job: DueJob): string[] =>
  Array.from({ length: DUE_SHARDS }, (_, shard) => duePartition(job, shard));

/**
 * The due-list entry in an UpdateItem, for records that are not written whole (outbox emails,
 * webhook attempts, reminders, an auto-send invoice's delivery marker): `onDueList` puts the item on
 * `job`'s list at `at` (a SET clause and its values), OFF_DUE_LIST takes it off (a REMOVE clause),
 * `stillOnDueList` conditions a write on the entry the caller read. With dueKeys and withIndexKeys
 * these are the only places that spell the entry, so its shape (shards, attributes) changes here.
 */
export function onDueList(job: DueJob, userId: string, sk: string, at: string) {
  const keys = dueKeys(job, userId, sk, at);
  return { set: "duePk = :duePk, dueSk = :dueSk", values: { ":duePk": keys.duePk, ":dueSk": keys.dueSk }, keys };
}
export const OFF_DUE_LIST = "duePk, dueSk";

/**
 * A due job's dispatch mark (queue/dispatch.ts): the dueSk its next run reads from while the job's
 * queue still holds earlier runs' messages. One small item per job, outside every user's partition.
 */
export const dispatchMarkKey = (job: DueJob) => ({ pk: "DISPATCH", sk: job });
export const stillOnDueList = (entry: { duePk?: string; dueSk?: string }) => ({
  condition: "duePk = :duePk AND dueSk = :dueSk",
  values: { ":duePk": entry.duePk, ":dueSk": entry.dueSk },
});

/**
 * Moves an item on `job`'s list to `at`, conditioned on the entry the caller read (a reminder or an
 * auto-send invoice that waits for its user's email quota: queue workers, issue 37).
 */
export function movedOnDueList(
  job: DueJob,
  userId: string,
  sk: string,
  at: string,
  from: { duePk?: string; dueSk?: string },
) {
  const keys = dueKeys(job, userId, sk, at);
  return {
    set: "duePk = :movedPk, dueSk = :movedSk",
    condition: "duePk = :fromPk AND dueSk = :fromSk",
    values: { ":movedPk": keys.duePk, ":movedSk": keys.dueSk, ":fromPk": from.duePk, ":fromSk": from.dueSk },
  };
}

/** Where an item read from a due list sorts on it: oldest first (its time, then user and key). */
export const dueOrder = (entry: { dueSk?: unknown }): string => String(entry.dueSk ?? "");

/** Whether an item (read by a queue worker) is on `job`'s list and due at `now` (isDue). */
export function isDueEntry(job: DueJob, entry: { dueSk?: unknown }, now: string): boolean {
  if (typeof entry.dueSk !== "string") return false;
  return isDue(job, entry.dueSk.slice(0, entry.dueSk.indexOf("#")), now);
}

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

/** The index attributes of a listed record: what withIndexKeys derives. */
type IndexAttribute = "gsi1pk" | "gsi1sk" | "gsi2pk" | "gsi2sk" | "duePk" | "dueSk";

/**
 * The jobs each listed kind waits for, and when: a record is on a job's due list while it is in one
 * of `statuses`, at the time in its `at` attribute (absent or null: on no list) — a sent invoice
 * until it is overdue (dueDate); an auto-send occurrence of a schedule until the recurring job has
 * delivered it (deliverAt, schedules/occurrences.ts); a sent estimate until it expires (validUntil);
 * an active schedule until its next occurrence (nextRunAt). The first rule that applies wins.
 */
interface DueRule {
  job: DueJob;
  statuses: readonly string[];
  at: string;
}
const DUE_LISTS: Record<"INVOICE" | "ESTIMATE" | "SCHEDULE", readonly DueRule[]> = {
  INVOICE: [
    { job: "overdue", statuses: ["sent"], at: "dueDate" },
    { job: "recurring", statuses: ["draft", "finalized"], at: "deliverAt" },
  ],
  ESTIMATE: [{ job: "expire-estimates", statuses: ["sent"], at: "validUntil" }],
  SCHEDULE: [{ job: "recurring", statuses: ["active"], at: "nextRunAt" }],
};

export type ListedKind = keyof typeof DUE_LISTS;

/** Exactly an entity's sort key (entitySk) of a listed kind; a payment's (INVOICE#…#PAYMENT#…) is not one. */
const LISTED_SK = /^(INVOICE|ESTIMATE|SCHEDULE)#\d{10}$/;

/**
 * A listed record (invoice, estimate, schedule) with the index attributes that follow from its
 * state, in one place: its byStatus and byClient entries, and its due-list entry only while it waits
 * for its job (DUE_LISTS). putIfVersion and the item builders pass every such record through here,
 * and transition() derives the same from the status it writes, so a status is never written without
 * its index entry and a due list never holds a record its job would skip. Any other item is
 * returned as it is.
 */
export function withIndexKeys<T extends object>(item: T): T {
  const record = item as Record<string, unknown>;
  const sk = record.sk;
  const kind = typeof sk === "string" ? (LISTED_SK.exec(sk)?.[1] as ListedKind | undefined) : undefined;
  if (!kind) return item;
  const { duePk: _pk, dueSk: _sk, ...rest } = record;
  const userId = record.userId as string;
  const id = record.id as number;
  const indexed: Record<string, unknown> = {
    ...rest,
    ...statusIndexKeys(userId, kind, record.status as string, id),
    ...clientIndexKeys(userId, kind, record.clientId as number, id),
  };
  const due = dueListOf(kind, record);
  if (due) Object.assign(indexed, dueKeys(due.job, userId, sk as string, due.at));
  return indexed as T;
}

/** The due list a record of `kind` in this state is on, and at what time; undefined for none. */
function dueListOf(kind: ListedKind, record: Record<string, unknown>): { job: DueJob; at: string } | undefined {
  for (const rule of DUE_LISTS[kind]) {
    const at = record[rule.at];
    if (rule.statuses.includes(record.status as string) && typeof at === "string") return { job: rule.job, at };
  }
  return undefined;
}

/** Whether a record of `kind` may be on a due list in `status` (then its dates decide). */
export const mayBeDue = (kind: ListedKind, status: string): boolean =>
  DUE_LISTS[kind].some((rule) => rule.statuses.includes(status));

/** For item builders: the new record, its index attributes derived (withIndexKeys). */
export const indexed = <T extends IndexedItem>(item: Omit<T, IndexAttribute>): T => withIndexKeys(item) as T;
