import type { Deps } from "../context";
import type { InvoiceItem } from "../invoices/model";
import { amountDue, type PublicEstimate } from "../public/view";
import { startOfUtcDay } from "../time";
import { displayDate, displayMoney } from "./format";
import { publicEstimateUrl, publicInvoiceUrl } from "./links";
import type { OutgoingEmail } from "./outbox";

/**
 * The emails' words. Plain text: user text (a client's name, notes) can be anything and is never
 * interpreted. Subjects carry only what we generate (numbers, amounts, dates), never user text.
 */
type LinkDeps = Pick<Deps, "publicBaseUrl">;

const signOff = "Thank you for your business.";

/** The invoice itself, on send: to the send's recipient, with the public link. */
export function invoiceEmail(deps: LinkDeps, invoice: InvoiceItem, to: string): OutgoingEmail {
  const total = displayMoney(invoice.total, invoice.currency);
  return {
    to,
    subject: `Invoice ${invoice.invoiceNumber} for ${total}, due ${displayDate(invoice.dueDate)}`,
    text: [
      `Hello ${invoice.clientName},`,
      "",
      `Here is invoice ${invoice.invoiceNumber} for ${total}, due on ${displayDate(invoice.dueDate)}.`,
      "",
      "View, download or pay it here:",
      publicInvoiceUrl(deps, invoice.publicToken),
      "",
      signOff,
      "",
    ].join("\n"),
  };
}

/**
 * A payment reminder: the amount still due and the public link. Worded by where `now` stands
 * against the due date (not by the reminder's kind), so a reminder a late job run sends is still
 * true: one sent after the due day says the invoice is overdue.
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
        ? [`Reminder: invoice ${number} is due today`, `A friendly reminder that invoice ${number} is due today (${due}).`]
        : [`Overdue: invoice ${number} was due on ${due}`, `Our records show that invoice ${number} was due on ${due} and has not been paid yet.`];
  return {
    to,
    subject,
    text: [
      `Hello ${invoice.clientName},`,
      "",
      lead,
      "",
      `Amount due: ${displayMoney(amountDue(invoice), invoice.currency)}`,
      "",
      "View, download or pay it here:",
      publicInvoiceUrl(deps, invoice.publicToken),
      "",
      "If you have already paid, please disregard this message.",
      "",
      signOff,
      "",
    ].join("\n"),
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
  return {
    to,
    subject: `Estimate ${number} for ${total}`,
    text: [
      `Hello ${estimate.clientName},`,
      "",
      `Here is estimate ${number} for ${total}.${validity}`,
      "",
      "View it here:",
      publicEstimateUrl(deps, estimate.publicToken),
      "",
      signOff,
      "",
    ].join("\n"),
  };
}
