import { Hono } from "hono";
import type { Ctx } from "@invoicing/core/deps";
import { getCreditNote, toCreditNote } from "@invoicing/core/credit-notes/read";
import { DomainError, invalidTransition } from "@invoicing/core/errors";
import { getInvoice } from "@invoicing/core/invoices/invoices";
import { invoiceKey, toInvoice, type InvoiceItem } from "@invoicing/core/invoices/model";
import { peppolAddresses } from "@invoicing/core/peppol/addresses";
import type { PeppolDocumentKind } from "@invoicing/core/capabilities/peppol-provider";
import { PeppolRegistrationOut } from "@invoicing/core/peppol/resource";
import {
  atProvider,
  deregisterPeppol,
  findRegistration,
  registerPeppol,
  requireProvider,
  toRegistration,
} from "@invoicing/core/peppol/registration";
import { notFound } from "@invoicing/core/errors";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { creditNoteSourceOf } from "../einvoice/credit-note";
import { missingForEInvoice } from "../einvoice/requirements";
import type { AppEnv } from "../http/app-env";
import { HttpProblem, type ProblemCode } from "../http/problems";
import { describe } from "../http/describe";
import { verifiedKey } from "../http/middleware";
import type { documentSendBody } from "../schemas/documents";
import type * as v from "valibot";

/**
 * The business's Peppol registration (API.md section 19, docs/peppol.md) and the checks of a send
 * with `channel: "peppol"`, made before anything changes.
 */
/** The registration has no version of its own: no ETag. */
const REGISTRATION = { status: 200, description: "The registration.", schema: PeppolRegistrationOut } as const;

export const peppol = new Hono<AppEnv>()
  .put(
    "/profile/peppol-registration",
    describe({
      operationId: "registerPeppol",
      tag: "Profile",
      summary: "Register the business on Peppol",
      description:
        "Registers the profile's `peppolId` at the access point provider as a participant that sends and receives invoices. Repeating it changes nothing; a changed `peppolId` replaces the registration. No provider configured: 422 peppol_not_configured.",
      success: REGISTRATION,
      problems: ["peppol_not_configured", "invalid_transition", "peppol_registration_in_progress"],
    }),
    async (c) => {
      // The provider is called before our write: only once the key is good and the request has its
      // rate-limit place, so a 429 or 401 answer registers nothing there either.
      await verifiedKey(c);
      return c.json(await registerPeppol(c.get("ctx")), 200);
    },
  )
  .get(
    "/profile/peppol-registration",
    describe({
      operationId: "getPeppolRegistration",
      tag: "Profile",
      summary: "The business's Peppol registration",
      description: "404 when never registered.",
      success: REGISTRATION,
    }),
    async (c) => {
      const found = await findRegistration(c.get("ctx"));
      if (!found) throw notFound("Peppol registration");
      return c.json(toRegistration(found), 200);
    },
  )
  .delete(
    "/profile/peppol-registration",
    describe({
      operationId: "deregisterPeppol",
      tag: "Profile",
      summary: "Deregister the business from Peppol",
      success: { status: 204, description: "Deregistered." },
      problems: ["peppol_not_configured", "peppol_registration_in_progress"],
    }),
    async (c) => {
      await verifiedKey(c); // as for PUT: the provider deregisters before our write
      await deregisterPeppol(c.get("ctx"));
      return c.body(null, 204);
    },
  );

/** What the send of an invoice or a credit note may answer besides its own rules: the email's and a Peppol send's checks. */
export const DOCUMENT_SEND_PROBLEMS = [
  "client_email_missing",
  "email_quota_exceeded",
  "peppol_not_configured",
  "peppol_not_registered",
  "e_invoice_incomplete",
  "peppol_recipient_unreachable",
] as const satisfies readonly ProblemCode[];

/**
 * A `/send` body (schemas/documents.ts documentSendBody) as the document's send takes it: by email
 * to `to`, or with `channel: "peppol"` the Peppol checks made first (below), for invoices and
 * credit notes alike.
 */
export async function documentSendOptions(
  ctx: Ctx,
  kind: PeppolDocumentKind,
  id: number,
  body: v.InferOutput<typeof documentSendBody>,
): Promise<{ to?: string; peppol?: { kind: PeppolDocumentKind; receiver: string } }> {
  const peppol = body.channel === "peppol" ? await peppolSendChecks(ctx, kind, id) : undefined;
  return { to: body.to, peppol };
}

/**
 * The checks of a Peppol send, in API.md's order, before anything changes: a provider is
 * configured, the business is registered and active, the document's `format=peppol` is complete,
 * the buyer's `peppolId` receives this document type on the network. Returns what the send records.
 */
async function peppolSendChecks(
  ctx: Ctx,
  kind: PeppolDocumentKind,
  id: number,
): Promise<{ kind: PeppolDocumentKind; receiver: string }> {
  const provider = requireProvider(ctx);
  const registration = await findRegistration(ctx);
  if (registration?.status !== "active") {
    throw new DomainError(
      "peppol_not_registered",
      "register the business on Peppol first (PUT /profile/peppol-registration)",
    );
  }
  const source = await sourceOf(ctx, kind, id);
  const missing = missingForEInvoice(source, "peppol");
  if (missing.length > 0) {
    const detail = `the peppol e-invoice needs: ${missing.map((e) => e.path).join(", ")}`;
    throw new HttpProblem("e_invoice_incomplete", detail.slice(0, 1000), {}, missing);
  }
  const receiver = source.buyerPeppolId!;
  const documentType = kind === "INVOICE" ? "invoice" : "credit_note";
  if (!(await atProvider(() => provider.canReceive(receiver, documentType)))) {
    throw new DomainError(
      "peppol_recipient_unreachable",
      `${receiver} cannot receive ${documentType === "invoice" ? "invoices" : "credit notes"} on the Peppol network`,
    );
  }
  return { kind, receiver };
}

/** The document as the e-invoice writer's input, with the parties' Peppol identifiers now. */
async function sourceOf(ctx: Ctx, kind: PeppolDocumentKind, id: number) {
  if (kind === "INVOICE") {
    const item = await getInvoice(ctx, id, true);
    // Only a finalized invoice is sent (as by email): say so before what it would lack.
    if (item.status !== "finalized") throw invalidTransition(`invoice ${id}`, item.status, "send");
    const peppol = await peppolAddresses(ctx, ctx.userId, item.clientId);
    const invoice = toInvoice(item);
    return {
      ...invoice,
      payLink: invoice.cardProcessorPaymentLink ?? invoice.altProcessorPaymentLink ?? null,
      sellerPeppolId: peppol.seller,
      buyerPeppolId: peppol.buyer,
    };
  }
  const note = await getCreditNote(ctx, id, true);
  const [found, peppol] = await Promise.all([
    ctx.db.doc.send(new GetCommand({ TableName: ctx.db.table, Key: invoiceKey(ctx.userId, note.invoiceId) })),
    peppolAddresses(ctx, ctx.userId, note.clientId),
  ]);
  const invoice = found.Item as InvoiceItem;
  return {
    ...creditNoteSourceOf(toCreditNote(note), invoice),
    sellerPeppolId: peppol.seller,
    buyerPeppolId: peppol.buyer,
  };
}
