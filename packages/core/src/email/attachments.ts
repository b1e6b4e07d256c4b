import type { Deps } from "../context";
import { getInvoice } from "../invoices/invoices";
import { toInvoice } from "../invoices/model";
import { documentAssets } from "../public/assets";
import { invoiceView } from "../public/view";
import type { EmailAttachment } from "./transport";

/**
 * What an email carries besides its text: the invoice PDF of a `send`. Only the reference is
 * stored with the email; the PDF is drawn when the email is delivered, from the invoice as it is
 * then (an issued invoice does not change: its seller, client and amounts are frozen), by whoever
 * delivers it with a renderer (the jobs, the stream subscriber, the local server).
 */
export interface AttachmentSpec {
  kind: "invoice_pdf";
  invoiceId: number;
}

export async function attachmentsFor(
  deps: Pick<Deps, "db" | "clock" | "renderPdf" | "publicBaseUrl">,
  item: { userId: string; attachment?: AttachmentSpec },
): Promise<EmailAttachment[]> {
  const spec = item.attachment;
  if (!spec) return [];
  if (!deps.renderPdf) throw new Error("an attachment needs a PDF renderer");
  const ctx = { ...deps, userId: item.userId } as Parameters<typeof getInvoice>[0];
  const invoice = await getInvoice(ctx, spec.invoiceId, true);
  const view = invoiceView(toInvoice(invoice), await documentAssets(deps, item.userId, invoice), deps);
  const content = await deps.renderPdf(view, deps.clock());
  return [
    { filename: `${invoice.invoiceNumber ?? `invoice-${invoice.id}`}.pdf`, contentType: "application/pdf", content },
  ];
}
