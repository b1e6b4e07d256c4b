/**
 * The work queues by name, and what each is called in infra (infra/queues.ts links `<Logical>` and
 * its dead-letter queue `<Logical>Dead`). Pure data, no imports: SST evaluates infra/ on its own, and config.ts reads it (a leaf, below db and queue/).
 */
export const QUEUE_NAMES = [
  "overdue",
  "recurring",
  "reminders",
  "expire-estimates",
  "outbox",
  "webhooks",
  "checkout-expiry",
  "peppol",
] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export const QUEUE_RESOURCES = {
  overdue: "OverdueQueue",
  recurring: "RecurringQueue",
  reminders: "RemindersQueue",
  "expire-estimates": "ExpireEstimatesQueue",
  outbox: "OutboxQueue",
  webhooks: "WebhooksQueue",
  "checkout-expiry": "CheckoutExpiryQueue",
  peppol: "PeppolQueue",
} as const satisfies Record<QueueName, string>;

/**
 * Messages per batch: what one SQS worker invocation receives (batch size), what one SendMessageBatch
 * call carries (SQS allows 10), and the unit of the dispatcher's turns (./dispatch.ts).
 */
export const BATCH_SIZE = 10;

/**
 * Workers of each queue that run at once: deployed the event source mapping's maximum concurrency
 * (SQS allows 2 at least), in process the same number of batches at a time. Written down here once,
 * for infra/queues.ts, the in-process queue and docs/operations.md.
 * - due jobs: 2 each, so a month start drains in parallel but leaves the table's write capacity and
 *   the account's Lambda concurrency to the API;
 * - outbox: 4 (SES allows 14 emails/s at the start of production access; 4 workers of a few each);
 * - webhooks: 8, each making its batch's endpoints' attempts (one at a time per endpoint), so slow
 *   receivers hold at most these 8 workers and nothing else;
 * - checkout-expiry: 2 (a card processor call each; rare);
 * - peppol: 2 (a send's first hand-over: a UBL written and one call to the access point provider
 *   each, bounded by its adapter's timeout; Peppol sends are few beside emails).
 */
export const WORKER_CONCURRENCY: Record<QueueName, number> = {
  overdue: 2,
  recurring: 2,
  reminders: 2,
  "expire-estimates": 2,
  outbox: 4,
  webhooks: 8,
  "checkout-expiry": 2,
  peppol: 2,
};
