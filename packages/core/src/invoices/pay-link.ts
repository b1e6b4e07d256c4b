import type { Ctx } from "../deps";
import { publicInvoicePayUrl } from "../documents/links";
import type { InvoiceItem } from "./model";

/**
 * The pay link `send` stores (docs/payments.md): our own link `<public base>/public/invoices/{token}/pay`,
 * which never expires; opening it makes the checkout session (public/checkout.ts). For sendInvoice:
 * the pay link to store, when a card processor is configured. No call to it.
 */
export function payLinkForSend(
  ctx: Ctx,
  invoice: Pick<InvoiceItem, "publicToken">,
): { cardProcessorPaymentLink?: string } {
  if (!ctx.cardPayments || !ctx.publicBaseUrl) return {};
  return { cardProcessorPaymentLink: publicInvoicePayUrl(ctx, invoice.publicToken) };
}
