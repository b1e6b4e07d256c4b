import type { Db } from "./db/client";
import type { CommitHook } from "./db/commit";
import type { EmailTransport } from "./email/transport";
import type { CardProcessor } from "./payments/card-processor";

/**
 * What core use cases depend on, passed in rather than reached for: tests give a fixed clock,
 * the Lambda and the local server give real ones. Capabilities arrive with their modules
 * (email outbox, card processor) as optional members.
 */
export interface Deps {
  db: Db;
  clock: () => Date;
  /** Absolute base URL of the API, for links in emails (public pages). */
  publicBaseUrl?: string;
  /** The card processor (Stripe) when configured; unset means invoices get no card payment link. */
  payments?: CardProcessor;
  /** Which webhook URLs may be called (docs/events.md); unset: https to public addresses only. */
  webhookPolicy?: { allowPrivate: boolean };
  /** Where events also go (the EventBridge bus, deployed); unset: nowhere else. */
  eventBus?: { publish(events: readonly import("./events/types").Event[]): Promise<void> };
  /** Where queued emails are delivered (SES deployed, .eml files locally); unset: they stay queued. */
  outbox?: EmailTransport;
  [capability: string]: unknown;
}

/** A use case's context: the dependencies plus who is acting. */
export interface Ctx extends Deps {
  userId: string;
  /** Set by the idempotency layer: its write joins the change's transaction. */
  commitHook?: CommitHook;
}

export const nowIso = (ctx: Pick<Deps, "clock">): string => ctx.clock().toISOString();
