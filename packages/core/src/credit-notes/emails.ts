import { displayMoney } from "../documents/display";
import { publicCreditNoteUrl } from "../documents/links";
import type { OutgoingEmail } from "../email/outbox";
import { fromSeller, type LinkDeps, parts, signature } from "../email/templates";
import { centsOf } from "../money/money";
import type { CreditNoteItem } from "./model";
import { creditNoteView } from "./view";

/**
 * A credit note, on its send: its facts and amounts from the same view as its page and PDF
 * (credit-notes/view.ts creditNoteView: the invoice it corrects, the reason, the total, what it took off
 * the invoice's amount due and the amount to be refunded when not zero), its memo, the public link,
 * and its PDF attached (CN-000001.pdf). The invoice's issue date is on the attached PDF and the page
 * (the send does not read the invoice).
 */
export function creditNoteEmail(deps: LinkDeps, note: CreditNoteItem, to: string): OutgoingEmail {
  const view = creditNoteView(note, null, { seller: note.seller, logo: null });
  const number = note.creditNoteNumber;
  const total = displayMoney(note.total, note.currency);
  const amounts = view.totals.slice(view.totals.findIndex((t) => t.label === "Total"));
  const refund =
    centsOf(note.amountToRefund) > 0n
      ? ` ${displayMoney(note.amountToRefund, note.currency)} will be refunded to you.`
      : "";
  return {
    to,
    subject: `Credit note ${number} for invoice ${note.invoiceNumber}: ${total}`,
    ...fromSeller(note.seller),
    ...parts({
      preheader: `Credit note ${number} for invoice ${note.invoiceNumber}: ${total}.`,
      sender: note.seller?.businessName ?? null,
      heading: `Credit note ${number}`,
      paragraphs: [
        `Hello ${note.clientName},`,
        `Here is credit note ${number} for ${total}, correcting invoice ${note.invoiceNumber}.${refund} The PDF is attached.`,
        ...(note.memo ? [note.memo] : []),
      ],
      summary: [
        ...view.facts.filter((f) => f.label !== "Credit note no."),
        ...amounts.map((t) => ({ label: t.label, value: t.value, strong: t.emphasis })),
      ],
      button: { href: publicCreditNoteUrl(deps, note.publicToken), label: "View or download it here" },
      after: [`Attached: ${number}.pdf`],
      signature: signature(note.seller),
      footer: note.seller?.footer ?? null,
    }),
    attachment: { kind: "credit_note_pdf", creditNoteId: note.id },
  };
}
