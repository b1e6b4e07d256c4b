import type { Db } from "./db/dynamodb";
import type { CommitHook } from "./db/commit";
import type { AttachmentSpec, EmailAttachment, EmailTransport } from "./capabilities/email-transport";
import type { CardProcessor } from "./capabilities/card-processor";
import type { DocumentView } from "./capabilities/document-view";
import type { UrlPolicy } from "./capabilities/url-guard";
import type { WorkQueue } from "./capabilities/work-queue";
import type { PeppolDocumentKind } from "./capabilities/peppol-provider";

/**
 * Writes a document's Peppol BIS Billing 3.0 UBL (functions/src/capabilities/peppol-hand-over.ts):
 * only the functions that hand documents over carry the writer. Here, not in capabilities/, because
 * it reads the table (capabilities/ sits below db/).
 */
export type PeppolUblWriter = (db: Db, userId: string, kind: PeppolDocumentKind, id: number) => Promise<string>;

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
  /**
   * Whether a card processor is configured (a Stripe secret key is set): `send` then stores the
   * invoice's pay link. Every function knows it from its config (functions/src/capabilities/create-deps.ts).
   */
  cardPayments?: boolean;
  /**
   * The card processor (Stripe) itself, only in what calls it: the Payments function (pay link,
   * webhook, refunds), the stream subscriber (expires ended checkout sessions) and the jobs.
   */
  payments?: CardProcessor;
  /**
   * Which webhook URLs may be called (docs/events.md); unset: https to public addresses only.
   * `timeoutMs` (default 10 s) and `lookup` are for tests.
   */
  webhookPolicy?: UrlPolicy & { timeoutMs?: number };
  /** Where events also go (the EventBridge bus, deployed); unset: nowhere else. */
  eventBus?: { publish(events: readonly import("./events/resource").Event[]): Promise<void> };
  /** Where queued emails are delivered (SES deployed, .eml files locally); unset: they stay queued. */
  outbox?: EmailTransport;
  /** Whether X-Forwarded-Host/-Proto come from a proxy the operator trusts (TRUST_PROXY=1). */
  trustProxy?: boolean;
  /** Emails a user may queue in any 24 hours (EMAIL_DAILY_QUOTA, default 200; see email/quota.ts). */
  emailDailyQuota?: number;
  /**
   * Request rate limits (API.md section 16; limits/rate-limit.ts): per second, for each user on
   * authenticated routes (API_RATE_LIMIT, default 50) and for each public token (PUBLIC_RATE_LIMIT,
   * default 10), bursts of twice that. Unset: no limits (in-process tests that do not test them).
   */
  rateLimits?: { requestsPerSecond: number; publicPerSecond: number };
  /**
   * Draws a document as a PDF (pdf-lib), for an email's attachment. Given only to what delivers
   * emails with a PDF attached — the outbox queue's workers and the local server
   * (functions/src/capabilities/pdf-attachments.ts) — never to the API function, whose bundle stays
   * without pdf-lib; an email with a PDF attached waits for a deliverer that has it. (The Documents
   * function draws its PDFs through its app: functions/src/http/pdf-renderer.ts.)
   */
  renderPdf?: (view: DocumentView, now: Date) => Promise<Uint8Array>;
  /**
   * Where jobs and the stream subscriber hand work to workers (SQS deployed: queue/port.ts); unset,
   * the same workers run in process (queue/in-process.ts).
   */
  workQueue?: WorkQueue;
  /**
   * Draws an email's attachment with `renderPdf` (public/attachments.ts attachmentsFor), given with it:
   * the outbox (email/) delivers the PDF of a document it may not import (documents import email/).
   */
  emailAttachments?: (
    deps: Pick<Deps, "db" | "clock" | "renderPdf" | "publicBaseUrl">,
    item: { userId: string; attachment?: AttachmentSpec },
  ) => Promise<EmailAttachment[]>;
  /** The Peppol access point provider (docs/peppol.md), when the operator configured one. */
  peppol?: import("./capabilities/peppol-provider").PeppolProvider;
  /** Writes a document's Peppol UBL: only in what hands documents over (the subscriber, the jobs, local). */
  peppolUbl?: PeppolUblWriter;
  [capability: string]: unknown;
}

/** A use case's context: the dependencies plus who is acting. */
export interface Ctx extends Deps {
  userId: string;
  /** Set by the idempotency layer: its write joins the change's transaction. */
  commitHook?: CommitHook;
}

export const nowIso = (ctx: Pick<Deps, "clock">): string => ctx.clock().toISOString();
