import { QueryCommand, type QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import type { Db } from "./dynamodb";
import { clientPartition, entityKey, type Kind, pad, statusPartition, userPk } from "./keys";

/**
 * Offset pagination on DynamoDB, made cheap by cursors. DynamoDB cannot skip N records without
 * reading them, so a page at offset O costs O + L reads; the `cursor` of a page's Link header carries
 * the id of its last record and lets the next request start right after it. A cursor holds only an
 * id, an offset and a filter signature: the partition always comes from the authenticated user, so a
 * forged cursor can never reach another user's records.
 */
export interface PageRequest {
  limit: number;
  offset: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** Present when the page is full: the cursor for offset + limit. */
  nextCursor?: string;
}

interface CursorData {
  o: number;
  /** The last record's position: its id, or (lists ordered by a string key, like events) that key. */
  id: number | string;
  f: string;
}

export function encodeCursor(data: CursorData): string {
  return Buffer.from(JSON.stringify(data)).toString("base64url");
}

function decodeCursor(token: string | undefined, offset: number, signature: string): number | undefined {
  const id = decodePosition(token, offset, signature);
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** A cursor's position of either kind (number id or string key), when made for this offset and filters. */
function decodePosition(token: string | undefined, offset: number, signature: string): number | string | undefined {
  if (!token || token.length > 400) return undefined;
  try {
    const data = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Partial<CursorData>;
    if (data.o !== offset || data.f !== signature) return undefined;
    return typeof data.id === "string" || typeof data.id === "number" ? data.id : undefined;
  } catch {
    return undefined;
  }
}

interface ListQuery<P extends number | string = number> {
  /** Undefined for the table itself, else a GSI whose sort key is the padded id. */
  index?: "byStatus" | "byClient";
  partitionName: string;
  partitionValue: string;
  /** Table queries: the sort key prefix (e.g. "INVOICE#"). */
  skPrefix?: string;
  /**
   * Only items whose sort key (the table's `sk`, or the index's) is at least this: a list whose
   * sort key starts with the time (events) leaves out what is past its retention, even before
   * DynamoDB's TTL (which may take days) has deleted it.
   */
  sortFrom?: string;
  /** Extra equality filters applied after the key condition (e.g. status within a client's records). */
  filters?: Record<string, string | number>;
  /** Identifies the filters; a cursor made for other filters is ignored. */
  signature: string;
  /** Rebuilds the ExclusiveStartKey of the record with this id (all its key attributes). */
  startKey: (id: P) => Record<string, unknown>;
  /**
   * Lists ordered by a string key rather than the id (events): the item's position, and the check
   * that a cursor's position is one. Default: the item's numeric id.
   */
  position?: { of: (item: Record<string, unknown>) => P; valid: (value: unknown) => value is P };
}

const SORT_KEY_OF = { byStatus: "gsi1sk", byClient: "gsi2sk" } as const;

/** Lists newest first (ids descending), honouring offset, limit and cursor. */
export async function listPage<T extends { id: number | string }, P extends number | string = number>(
  db: Db,
  q: ListQuery<P>,
  page: PageRequest,
): Promise<Page<T>> {
  const decoded = q.position
    ? decodePosition(page.cursor, page.offset, q.signature)
    : decodeCursor(page.cursor, page.offset, q.signature);
  const afterId = decoded !== undefined && (!q.position || q.position.valid(decoded)) ? (decoded as P) : undefined;
  let toSkip = afterId === undefined ? page.offset : 0;
  const items: T[] = [];
  const names: Record<string, string> = { "#p": q.partitionName };
  const values: Record<string, unknown> = { ":p": q.partitionValue };
  let keyCondition = "#p = :p";
  if (q.skPrefix !== undefined || q.sortFrom !== undefined) {
    names["#s"] = q.index === undefined ? "sk" : SORT_KEY_OF[q.index];
    if (q.sortFrom === undefined) {
      values[":s"] = q.skPrefix;
      keyCondition += " AND begins_with(#s, :s)";
    } else if (q.skPrefix === undefined) {
      values[":from"] = q.sortFrom;
      keyCondition += " AND #s >= :from";
    } else {
      // One condition per sort key: the prefix becomes the upper end of a range.
      values[":from"] = q.sortFrom;
      values[":to"] = `${q.skPrefix}\uffff`;
      keyCondition += " AND #s BETWEEN :from AND :to";
    }
  }
  const filterParts: string[] = [];
  for (const [i, [name, value]] of Object.entries(q.filters ?? {}).entries()) {
    names[`#f${i}`] = name;
    values[`:f${i}`] = value;
    filterParts.push(`#f${i} = :f${i}`);
  }
  let startKey = afterId === undefined ? undefined : q.startKey(afterId);
  do {
    const input: QueryCommandInput = {
      TableName: db.table,
      IndexName: q.index,
      KeyConditionExpression: keyCondition,
      FilterExpression: filterParts.length ? filterParts.join(" AND ") : undefined,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      ExclusiveStartKey: startKey,
      Limit: Math.min(toSkip + page.limit - items.length, 1000),
    };
    const out = await db.doc.send(new QueryCommand(input));
    for (const item of out.Items ?? []) {
      if (toSkip > 0) toSkip--;
      else if (items.length < page.limit) items.push(item as T);
    }
    startKey = out.LastEvaluatedKey;
  } while (startKey && items.length < page.limit);
  const last = items[items.length - 1];
  const nextCursor =
    items.length === page.limit && last
      ? encodeCursor({ o: page.offset + page.limit, id: q.position ? q.position.of(last) : last.id, f: q.signature })
      : undefined;
  return { items, nextCursor };
}

interface EntityFilters {
  status?: string;
  clientId?: number;
}

/**
 * The list of one kind of a user's records, optionally filtered: by status through byStatus, by
 * client through byClient (then by status as a filter within that client's records).
 */
export function listEntities<T extends { id: number }>(
  db: Db,
  userId: string,
  kind: Kind,
  filters: EntityFilters,
  page: PageRequest,
): Promise<Page<T>> {
  // The user is part of the signature: another user's cursor is ignored like any foreign one.
  const signature = `${userId}|${kind}|${filters.status ?? ""}|${filters.clientId ?? ""}`;
  const base = (id: number) => entityKey(userId, kind, id);
  /** A page of one index partition: its sort key is the padded id, so a cursor's id is its start. */
  const fromIndex = (index: "byClient" | "byStatus", partition: string, status?: string) => {
    const [pkName, skName] = index === "byClient" ? ["gsi2pk", "gsi2sk"] : ["gsi1pk", "gsi1sk"];
    return listPage<T>(
      db,
      {
        index,
        partitionName: pkName,
        partitionValue: partition,
        filters: status ? { status } : undefined,
        signature,
        startKey: (id) => ({ ...base(id), [pkName]: partition, [skName]: pad(id) }),
      },
      page,
    );
  };
  if (filters.clientId !== undefined) {
    return fromIndex("byClient", clientPartition(userId, kind, filters.clientId), filters.status);
  }
  if (filters.status !== undefined) return fromIndex("byStatus", statusPartition(userId, kind, filters.status));
  return listPage<T>(
    db,
    {
      partitionName: "pk",
      partitionValue: userPk(userId),
      skPrefix: `${kind}#`,
      signature,
      startKey: base,
    },
    page,
  );
}
