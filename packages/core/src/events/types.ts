/**
 * The events the service emits (docs/events.md): one per changed resource, derived from the table's
 * change stream. This list is the one the API validates webhook subscriptions against.
 */
export const EVENT_TYPES = [
  "client.created",
  "client.updated",
  "client.deleted",
  "invoice.created",
  "invoice.updated",
  "invoice.deleted",
  "invoice.finalized",
  "invoice.sent",
  "invoice.partially_paid",
  "invoice.paid",
  "invoice.overdue",
  "invoice.voided",
  "invoice.credited",
  "payment.created",
  "payment.deleted",
  "payment.refunded",
  "estimate.created",
  "estimate.updated",
  "estimate.deleted",
  "estimate.sent",
  "estimate.accepted",
  "estimate.declined",
  "estimate.expired",
  "estimate.converted",
  "recurring_schedule.created",
  "recurring_schedule.updated",
  "recurring_schedule.deleted",
  "recurring_schedule.paused",
  "recurring_schedule.resumed",
  "recurring_schedule.cancelled",
  "recurring_schedule.completed",
  "credit_note.created",
  "credit_note.sent",
  "webhook_endpoint.disabled",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
export const RESOURCE_TYPES = [
  "client",
  "invoice",
  "payment",
  "estimate",
  "recurring_schedule",
  "credit_note",
  "webhook_endpoint",
] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** One event derived from a stream record (stream/derive.ts), before it is stored (events/store.ts). */
export interface DerivedEvent {
  userId: string;
  type: EventType;
  resourceType: ResourceType;
  resourceId: number;
  data: Record<string, unknown>;
}
