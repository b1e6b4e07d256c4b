import type { Deps } from "../context";
import type { InvoiceItem } from "../invoices/model";
import type { Seller } from "../profile/profile";
import { amountDue, creditNoteView, type PublicEstimate } from "../public/view";
import { startOfUtcDay } from "../time";
import { centsOf } from "../money/money";
import { displayDate, displayMoney } from "../documents/display";
import { renderEmailHtml, type EmailLayout } from "./html";
import { publicCreditNoteUrl, publicEstimateUrl, publicInvoiceUrl } from "../public/links";
import type { CreditNoteItem } from "../credit-notes/model";
import type { OutgoingEmail } from "./outbox";

/**
 * The emails' words, each as plain text and as HTML (one multipart/alternative). They come from
 * the business: its name is the From display name and the signature, replies go to its email. User
 * text (names, notes) is never interpreted: plain in the text part, escaped in the HTML part.
 * Subjects carry only what we generate (numbers, amounts, dates), never user text.
 */
type LinkDeps = Pick<Deps, "publicBaseUrl">;

const THANKS = "Thank you for your business.";

/** From the business (the document's seller): display name and reply address, when it has them. */
const fromSeller = (seller: Seller | null | undefined) => ({
  fromName: seller?.businessName ?? seller?.legalName ?? null,
  replyTo: seller?.email ?? null,
});

/** The text part, from the same layout as the HTML part, so the two always say the same. */
function textOf(e: EmailLayout): string {
  const lines = [e.heading, "", ...e.paragraphs.flatMap((p) => [p, ""])];
  if (e.summary.length) lines.push(...e.summary.map((r) => `${r.label}: ${r.value}`), "");
  if (e.button) lines.push(`${e.button.label}:`, e.button.href, "");
  for (const a of e.after) lines.push(a, "");
  lines.push(e.signature, "");
  if (e.footer) lines.push("--", e.footer, "");
  return lines.join("\n");
}

function parts(e: EmailLayout): { text: string; html: string } {
  return { text: textOf(e), html: renderEmailHtml(e) };
}

const signature = (seller: Seller | null | undefined) =>
  `${THANKS}\n${seller?.businessName ?? seller?.legalName ?? ""}`.trim();

/** The invoice itself, on send: to the send's recipient, with the public link and the PDF attached. */
export function invoiceEmail(deps: LinkDeps, invoice: InvoiceItem, to: string): OutgoingEmail {
  const total = displayMoney(invoice.total, invoice.currency);
  const due = displayDate(invoice.dueDate);
  const number = invoice.invoiceNumber ?? "";
  const link = publicInvoiceUrl(deps, invoice.publicToken);
  return {
    to,
    subject: `Invoice ${number} for ${total}, due ${due}`,
    ...fromSeller(invoice.seller),
    ...parts({
      preheader: `Invoice ${number} for ${total}, due ${due}.`,
      sender: invoice.seller?.businessName ?? null,
      heading: `Invoice ${number}`,
      paragraphs: [
        `Hello ${invoice.clientName},`,
        `Here is invoice ${number} for ${total}, due on ${due}. The PDF is attached.`,
      ],
      summary: [
        { label: "Invoice", value: number },
        { label: "Issue date", value: displayDate(invoice.issueDate) },
        { label: "Due date", value: due },
        { label: "Amount due", value: displayMoney(amountDue(invoice), invoice.currency), strong: true },
      ],
      button: { href: link, label: "View, download or pay it here" },
      after: [`Attached: ${number}.pdf`],
      signature: signature(invoice.seller),
      footer: invoice.seller?.footer ?? null,
    }),
    attachment: { kind: "invoice_pdf", invoiceId: invoice.id },
  };
}

/**
 * A payment reminder: the amount still due and the public link (the PDF is one click from there).
 * Worded by where `now` stands against the due date (not by the reminder's kind), so a reminder a
 * late job run sends is still true: one sent after the due day says the invoice is overdue.
 */
export function reminderEmail(deps: LinkDeps, invoice: InvoiceItem, now: string, to: string): OutgoingEmail {
  const number = invoice.invoiceNumber ?? "";
  const due = displayDate(invoice.dueDate);
  const dueDay = invoice.dueDate ? startOfUtcDay(new Date(invoice.dueDate)) : now;
  const today = startOfUtcDay(new Date(now));
  const [subject, lead] =
    today < dueDay
      ? [`Reminder: invoice ${number} is due on ${due}`, `A friendly reminder that invoice ${number} is due on ${due}.`]
      : today === dueDay
        ? [
            `Reminder: invoice ${number} is due today`,
            `A friendly reminder that invoice ${number} is due today (${due}).`,
          ]
        : [
            `Overdue: invoice ${number} was due on ${due}`,
            `Our records show that invoice ${number} was due on ${due} and has not been paid yet.`,
          ];
  const link = publicInvoiceUrl(deps, invoice.publicToken);
  return {
    to,
    subject,
    ...fromSeller(invoice.seller),
    ...parts({
      preheader: lead,
      sender: invoice.seller?.businessName ?? null,
      heading: subject,
      paragraphs: [`Hello ${invoice.clientName},`, lead],
      summary: [
        { label: "Invoice", value: number },
        { label: "Due date", value: due },
        { label: "Amount due", value: displayMoney(amountDue(invoice), invoice.currency), strong: true },
      ],
      button: { href: link, label: "View, download or pay it here" },
      after: [`The invoice PDF: ${link}/pdf`, "If you have already paid, please disregard this message."],
      signature: signature(invoice.seller),
      footer: invoice.seller?.footer ?? null,
    }),
  };
}

/** An estimate, on its send: what was quoted, until when, and the link to its public page. */
export function estimateEmail(
  deps: LinkDeps,
  estimate: Omit<PublicEstimate, "taxBreakdown"> & { publicToken: string },
  to: string,
): OutgoingEmail {
  const number = estimate.estimateNumber ?? "";
  const total = displayMoney(estimate.total, estimate.currency);
  const validity = estimate.validUntil ? ` It is valid until ${displayDate(estimate.validUntil)}.` : "";
  const summary = [
    { label: "Estimate", value: number },
    { label: "Total", value: total, strong: true },
  ];
  if (estimate.validUntil) summary.splice(1, 0, { label: "Valid until", value: displayDate(estimate.validUntil) });
  return {
    to,
    subject: `Estimate ${number} for ${total}`,
    ...fromSeller(estimate.seller),
    ...parts({
      preheader: `Estimate ${number} for ${total}.${validity}`,
      sender: estimate.seller?.businessName ?? null,
      heading: `Estimate ${number}`,
      paragraphs: [`Hello ${estimate.clientName},`, `Here is estimate ${number} for ${total}.${validity}`],
      summary,
      button: { href: publicEstimateUrl(deps, estimate.publicToken), label: "View it here" },
      after: [],
      signature: signature(estimate.seller),
      footer: estimate.seller?.footer ?? null,
    }),
  };
}

/**
 * A credit note, on its send: its facts and amounts from the same view as its page and PDF
 * (public/view.ts creditNoteView: the invoice it corrects, the reason, the total, what it took off
 * the invoice's amount due and the amount to be refunded when not zero), its memo, the public link,
 * and its PDF attached (CN-000001.pdf). It names the invoice with its issue date, as the PDF and the
 * page do (`invoiceIssueDate`, read by the send).
 */
export function creditNoteEmail(
  deps: LinkDeps,
  note: CreditNoteItem,
  to: string,
  invoiceIssueDate: string | null,
): OutgoingEmail {
  const view = creditNoteView(note, invoiceIssueDate, { seller: note.seller, logo: null });
  const invoice = `invoice ${note.invoiceNumber}${invoiceIssueDate ? ` of ${displayDate(invoiceIssueDate)}` : ""}`;
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
        `Here is credit note ${number} for ${total}, correcting ${invoice}.${refund} The PDF is attached.`,
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
