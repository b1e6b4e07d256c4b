import * as v from "valibot";
import { CREDIT_NOTE_REASONS } from "@invoicing/core/credit-notes/resource";
import { taxCategoryProblem } from "@invoicing/core/documents/line-items";
import { parseTaxRate } from "@invoicing/core/money/money";
import { id, MAX_LINE_ITEMS, notes, pathId, positiveAmount, quantity, taxCategory, taxRate } from "./common";

/**
 * Request pieces of credit notes (API.md section 17). A credited line is either a line of the
 * invoice (`invoiceLineId`, with an optional `quantity`) or a free line (`description`, `unitPrice`
 * > 0, optional quantity, taxRate and taxCategory, as on invoices). One object with both sets of
 * fields optional, and the rule between them checked after, so every error names its field (a
 * union of two objects would answer "invalid type" for the line as a whole).
 */
const FREE_ONLY = ["description", "unitPrice", "taxRate", "taxCategory"] as const;

export const creditLineInput = v.pipe(
  v.strictObject({
    invoiceLineId: v.optional(id),
    description: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(1000))),
    quantity: v.optional(quantity),
    unitPrice: v.optional(positiveAmount),
    taxRate: v.optional(taxRate),
    taxCategory: v.optional(taxCategory),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const line = dataset.value;
    const at = (key: string): [v.IssuePathItem] => [
      { type: "object", origin: "value", input: line, key, value: (line as Record<string, unknown>)[key] },
    ];
    if (line.invoiceLineId !== undefined) {
      for (const key of FREE_ONLY) {
        if (line[key] !== undefined) {
          addIssue({
            message:
              "not allowed with invoiceLineId: a line of the invoice is credited at its own description, price and tax",
            path: at(key),
          });
        }
      }
      return;
    }
    if (line.description === undefined)
      addIssue({ message: "required for a free line (or give invoiceLineId)", path: at("description") });
    if (line.unitPrice === undefined)
      addIssue({ message: "required for a free line (or give invoiceLineId)", path: at("unitPrice") });
    if (line.taxCategory !== undefined) {
      const rate = parseTaxRate(line.taxRate ?? "0");
      const problem = rate.ok ? taxCategoryProblem(line.taxCategory, rate.value) : null;
      if (problem) addIssue({ message: problem, path: at("taxCategory") });
    }
  }),
);

/** Length first, then the lines (as schemas/common.ts lineItems, for the same reason). */
export const creditLineItems = v.pipe(
  v.array(v.unknown()),
  v.maxLength(MAX_LINE_ITEMS, `at most ${MAX_LINE_ITEMS} line items`),
  v.array(creditLineInput),
);

export const createCreditNoteBody = v.strictObject({
  lineItems: v.optional(creditLineItems),
  reason: v.optional(v.nullable(v.picklist(CREDIT_NOTE_REASONS, `must be one of ${CREDIT_NOTE_REASONS.join(", ")}`))),
  memo: v.optional(v.nullable(notes)),
});

export const creditNoteListFilters = {
  invoiceId: v.optional(pathId),
  clientId: v.optional(pathId),
};
