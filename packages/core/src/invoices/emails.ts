import { displayDate, displayMoney } from "../documents/display";
import { publicInvoiceUrl } from "../documents/links";
import type { OutgoingEmail } from "../email/outbox";
import { fromSeller, type LinkDeps, parts, signature } from "../email/templates";
import { startOfUtcDay } from "../time";
import type { InvoiceItem } from "./model";
import { amountDue, invoiceAsSent } from "./view";

/**
 * The invoice itself, on send: to the send's recipient, with the public link and the PDF attached.
 * Its amount due and its PDF come from the same figures, the invoice's at the send (`asSent`, stored
 * with the email): a payment recorded before the PDF is drawn at delivery changes neither.
 */
export function invoiceEmail(deps: LinkDeps, invoice: InvoiceItem, to: string): OutgoingEmail {
  const asSent = invoiceAsSent(invoice);
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
        {
          label: "Amount due",
          value: displayMoney(amountDue({ total: invoice.total, ...asSent }), invoice.currency),
          strong: true,
        },
      ],
      button: { href: link, label: "View, download or pay it here" },
      after: [`Attached: ${number}.pdf`],
      signature: signature(invoice.seller),
      footer: invoice.seller?.footer ?? null,
    }),
    attachment: { kind: "invoice_pdf", invoiceId: invoice.id, asSent },
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
