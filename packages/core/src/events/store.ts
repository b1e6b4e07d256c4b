import type { Db } from "../db/dynamodb";
import type { Write } from "../db/commit";
import { userPk } from "../db/keys";
import { listPage, type Page, type PageRequest } from "../db/pagination";
import type { DerivedEvent } from "./types";
import type { Event } from "./resource";
import type { EventType, ResourceType } from "./types";

/**
 * The activity log: one item per event under the user's partition, sk `EVENT#<position>` where the
 * position `<createdAt>#<stream sequence number>#<index>` orders events as their changes happened
 * (the sequence number orders changes of the same second). Both parts come from the stream record,
 * so a redelivered record computes the same key, and the conditional put makes it a no-op.
 *
 * Filters use the two generic index slots: byStatus (gsi1) holds the user's events by type, byClient
 * (gsi2) by resource, each sorted by the same position. Kept 30 days (TTL `expiresAt`).
 */
export const EVENT_RETENTION_SECONDS = 30 * 86_400;
const SEQUENCE_WIDTH = 40; // DynamoDB stream sequence numbers are decimal strings of up to 40 digits

export interface EventItem extends Omit<Event, "data"> {
  /** The resource as JSON text: a DynamoDB map would not keep the public shape's field order. */
  data: string;
  pk: string;
  sk: string;
  position: string;
  gsi1pk: string;
  gsi1sk: string;
  gsi2pk: string;
  gsi2sk: string;
  expiresAt: number;
}

interface StreamOrigin {
  /** The stream record's eventID: unique per record, the same when it is delivered again. */
  eventId: string;
  sequenceNumber: string;
  /** ISO time of the change (the record's ApproximateCreationDateTime). */
  createdAt: string;
}

const typePartition = (userId: string, type: string) => `${userPk(userId)}#EVENT#TYPE#${type}`;
const resourcePartition = (userId: string, resourceType: string, resourceId: number) =>
  `${userPk(userId)}#EVENT#RESOURCE#${resourceType}#${resourceId}`;

/** The stored event for the `index`-th event derived from one stream record. */
export function eventItem(origin: StreamOrigin, index: number, event: DerivedEvent): EventItem {
  const position = `${origin.createdAt}#${origin.sequenceNumber.padStart(SEQUENCE_WIDTH, "0")}#${index}`;
  return {
    pk: userPk(event.userId),
    sk: `EVENT#${position}`,
    position,
    id: `evt_${origin.sequenceNumber}_${index}`,
    type: event.type,
    createdAt: origin.createdAt,
    resourceType: event.resourceType,
    resourceId: event.resourceId,
    data: JSON.stringify(event.data),
    gsi1pk: typePartition(event.userId, event.type),
    gsi1sk: position,
    gsi2pk: resourcePartition(event.userId, event.resourceType, event.resourceId),
    gsi2sk: position,
    expiresAt: Math.floor(Date.parse(origin.createdAt) / 1000) + EVENT_RETENTION_SECONDS,
  };
}

export class EventAlreadyStored extends Error {}

/** The event's put: fails (EventAlreadyStored) when a delivery of the same record stored it already. */
export function putEvent(db: Db, item: EventItem): Write {
  return {
    op: { Put: { TableName: db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
    onConditionFailed: () => new EventAlreadyStored(),
  };
}

export const toEvent = (item: EventItem): Event => ({
  id: item.id,
  type: item.type,
  createdAt: item.createdAt,
  resourceType: item.resourceType,
  resourceId: item.resourceId,
  data: JSON.parse(item.data) as Record<string, unknown>,
});

interface EventFilters {
  type?: EventType;
  resourceType?: ResourceType;
  resourceId?: number;
}

const isPosition = (value: unknown): value is string => typeof value === "string" && value.length < 120;

/**
 * The user's events of the last 30 days as of `now`, newest first. A type goes to its own index
 * partition, a resource (type and id) to its own, the rest is filtered within the chosen partition.
 * Older events are left out by the key condition (positions start with the time), so one that
 * TTL has not deleted yet is neither listed nor read.
 */
export function listEvents(
  db: Db,
  userId: string,
  filters: EventFilters,
  page: PageRequest,
  now: Date,
): Promise<Page<EventItem>> {
  const signature = `${userId}|EVENT|${filters.type ?? ""}|${filters.resourceType ?? ""}|${filters.resourceId ?? ""}`;
  const position = { of: (item: Record<string, unknown>) => String(item.position), valid: isPosition };
  const oldest = new Date(now.getTime() - EVENT_RETENTION_SECONDS * 1000).toISOString();
  const base = (p: string) => ({ pk: userPk(userId), sk: `EVENT#${p}` });
  const equal: Record<string, string | number> = {};
  if (filters.resourceType !== undefined && filters.resourceId !== undefined) {
    const partition = resourcePartition(userId, filters.resourceType, filters.resourceId);
    if (filters.type) equal.type = filters.type;
    return listPage<EventItem, string>(
      db,
      {
        index: "byClient",
        partitionName: "gsi2pk",
        partitionValue: partition,
        sortFrom: oldest,
        filters: equal,
        signature,
        position,
        startKey: (p) => ({ ...base(p), gsi2pk: partition, gsi2sk: p }),
      },
      page,
    );
  }
  if (filters.resourceType !== undefined) equal.resourceType = filters.resourceType;
  if (filters.resourceId !== undefined) equal.resourceId = filters.resourceId;
  if (filters.type !== undefined) {
    const partition = typePartition(userId, filters.type);
    return listPage<EventItem, string>(
      db,
      {
        index: "byStatus",
        partitionName: "gsi1pk",
        partitionValue: partition,
        sortFrom: oldest,
        filters: equal,
        signature,
        position,
        startKey: (p) => ({ ...base(p), gsi1pk: partition, gsi1sk: p }),
      },
      page,
    );
  }
  return listPage<EventItem, string>(
    db,
    {
      partitionName: "pk",
      partitionValue: userPk(userId),
      skPrefix: "EVENT#",
      sortFrom: `EVENT#${oldest}`,
      filters: equal,
      signature,
      position,
      startKey: base,
    },
    page,
  );
}
