import * as v from "valibot";
import { currency, email, lineItems, notes, optionalText, pathId } from "./common";

/**
 * Request pieces invoices and estimates share ("same rules as invoices").
 */

/** Fields of a draft document both kinds take, in create and PATCH alike. */
export const documentFields = {
  currency: v.optional(currency),
  notes: v.optional(v.nullable(notes)),
  terms: v.optional(v.nullable(notes)),
  lineItems: v.optional(lineItems),
  /** Why a line charges no tax (exempt, reverse charge, …): printed on the document. */
  taxExemptionReason: optionalText(500),
};

/** The list filters `status` (one of the kind's statuses) and `clientId`. */
export const documentListFilters = <const S extends readonly [string, ...string[]]>(statuses: S) => ({
  status: v.optional(v.picklist(statuses, `must be one of ${statuses.join(", ")}`)),
  clientId: v.optional(pathId),
});

/** `/send` of an invoice or an estimate: an optional recipient overriding the client's email. */
export const sendBody = v.strictObject({ to: v.optional(email) });

/**
 * `/send` of an invoice or a credit note: by email (the default, to `to` or the client's email) or
 * over Peppol (API.md section 19; `to` then only addresses the reminders).
 */
export const documentSendBody = v.strictObject({
  to: v.optional(email),
  channel: v.optional(v.picklist(["email", "peppol"], 'must be "email" or "peppol"')),
});
