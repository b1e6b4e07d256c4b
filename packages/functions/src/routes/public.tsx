import { createHash } from "node:crypto";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { notFound } from "@invoicing/core/errors";
import { toInvoice } from "@invoicing/core/invoices/model";
import { findPublicEstimate, findPublicInvoice } from "@invoicing/core/public/documents";
import { estimateView, invoiceView, type DocumentView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";
import { describe } from "../openapi/describe";

/**
 * The public pages (API.md section 9): what a client opens from the email link, without an API key.
 * The token is the only key: a token of the wrong shape, an unknown one and a draft's are all the
 * same 404 (never a 400 that would tell shapes apart). Pages are rendered on the server with
 * hono/jsx, which escapes every text and attribute value, so user text (descriptions, names, notes)
 * is always shown as text; a strict CSP (no script at all, only our own stylesheet by hash) would
 * stop an injection even if escaping failed.
 */
const CSS = `
:root { color-scheme: light; --ink: #1c1c21; --muted: #60606b; --rule: #e3e3e8; --accent: #2453d6; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f4f4f7; }
main { max-width: 820px; margin: 32px auto; background: #fff; border-radius: 12px; padding: 40px; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
header { display: flex; justify-content: space-between; align-items: flex-start; gap: 16px; flex-wrap: wrap; }
h1 { margin: 0; font-size: 28px; }
h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 0 0 6px; }
.status { display: inline-block; padding: 4px 12px; border-radius: 999px; font-weight: 600; font-size: 14px; background: #eef0f5; }
.status-paid, .status-accepted, .status-converted { background: #def7e5; color: #11632d; }
.status-overdue, .status-declined, .status-expired { background: #fde4e1; color: #a2261a; }
.status-void { background: #ececec; color: #555; text-decoration: line-through; }
.status-draft { background: #fff3cd; color: #7a5b00; }
.parties { display: flex; justify-content: space-between; gap: 24px; flex-wrap: wrap; margin: 32px 0; }
.parties p { margin: 0; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
dl { display: grid; grid-template-columns: auto auto; gap: 2px 16px; margin: 0; }
dt { color: var(--muted); } dd { margin: 0; text-align: right; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-size: 13px; color: var(--muted); font-weight: 600; border-bottom: 2px solid var(--rule); padding: 8px 6px; }
td { border-bottom: 1px solid var(--rule); padding: 10px 6px; vertical-align: top; }
td.description { white-space: pre-wrap; overflow-wrap: anywhere; }
.num { text-align: right; white-space: nowrap; }
.totals { margin: 20px 0 0 auto; max-width: 340px; }
.totals div { display: flex; justify-content: space-between; padding: 4px 0; }
.totals .emphasis { font-weight: 700; font-size: 18px; border-top: 1px solid var(--rule); padding-top: 8px; }
.actions { display: flex; gap: 16px; align-items: center; margin: 32px 0 8px; flex-wrap: wrap; }
.pay { display: inline-block; background: var(--accent); color: #fff; text-decoration: none; font-weight: 600; padding: 12px 28px; border-radius: 8px; font-size: 17px; }
.pay:hover, .pay:focus { background: #1b3fa6; }
a { color: var(--accent); }
section.text { margin-top: 28px; }
section.text p { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; }
footer { text-align: center; color: var(--muted); font-size: 13px; margin: 0 0 32px; }
@media (max-width: 600px) { main { margin: 0; border-radius: 0; padding: 20px; } .hide-narrow { display: none; } }
@media print { body { background: #fff; } main { box-shadow: none; margin: 0; } .actions { display: none; } }
`;

const STYLE_HASH = createHash("sha256").update(CSS).digest("base64");

/** Sent with every /public response, pages, PDFs and 404s alike. */
export const PUBLIC_SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  "X-Content-Type-Options": "nosniff",
  // The token is in the URL: it must not travel to the payment site in a Referer.
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  // A page shows live status (paid, void): never from a shared cache, never stale.
  "Cache-Control": "no-store",
  "X-Robots-Tag": "noindex, nofollow",
};

/** Mounted before the other route modules (app.ts), so it wraps every /public/* route, theirs too. */
export const securityHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(PUBLIC_SECURITY_HEADERS)) c.res.headers.set(name, value);
};

function DocumentPage(props: { view: DocumentView; pdfHref: string | null }) {
  const { view } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        {/* No icon: the browser would otherwise ask /favicon.ico, an authenticated path. */}
        <link rel="icon" href="data:," />
        <title>{view.title}</title>
        <style dangerouslySetInnerHTML={{ __html: CSS }} />
      </head>
      <body>
        <main>
          <header>
            <div>
              <h1>{view.title}</h1>
            </div>
            <span class={`status status-${view.status}`} data-testid="status">
              {view.statusLabel}
            </span>
          </header>

          <div class="parties">
            <div>
              <h2>Billed to</h2>
              <p>{view.billedTo.name}</p>
              {view.billedTo.email ? <p class="muted">{view.billedTo.email}</p> : null}
            </div>
            <dl>
              {view.dates.map((d) => (
                <>
                  <dt>{d.label}</dt>
                  <dd>{d.value}</dd>
                </>
              ))}
            </dl>
          </div>

          <table>
            <thead>
              <tr>
                <th>Description</th>
                <th class="num">Qty</th>
                <th class="num">Unit price</th>
                <th class="num hide-narrow">Tax</th>
                <th class="num">Amount</th>
              </tr>
            </thead>
            <tbody>
              {view.lines.map((line) => (
                <tr>
                  <td class="description">{line.description}</td>
                  <td class="num">{line.quantity}</td>
                  <td class="num">{line.unitPrice}</td>
                  <td class="num hide-narrow">{line.taxRate}</td>
                  <td class="num">{line.amount}</td>
                </tr>
              ))}
            </tbody>
          </table>

          <div class="totals" data-testid="totals">
            {view.totals.map((t) => (
              <div class={t.emphasis ? "emphasis" : undefined}>
                <span>{t.label}</span>
                <span>{t.value}</span>
              </div>
            ))}
          </div>

          {view.payLink || props.pdfHref ? (
            <div class="actions">
              {view.payLink ? (
                <a class="pay" href={view.payLink} rel="noopener noreferrer">
                  Pay now
                </a>
              ) : null}
              {props.pdfHref ? <a href={props.pdfHref}>Download PDF</a> : null}
            </div>
          ) : null}

          {view.notes ? (
            <section class="text">
              <h2>Notes</h2>
              <p>{view.notes}</p>
            </section>
          ) : null}
          {view.terms ? (
            <section class="text">
              <h2>Terms</h2>
              <p>{view.terms}</p>
            </section>
          ) : null}
        </main>
        <footer>{view.kind === "invoice" ? "Questions about this invoice? Reply to the email it came with." : "Questions about this estimate? Reply to the email it came with."}</footer>
      </body>
    </html>
  );
}

async function htmlPage(c: Context<AppEnv>, view: DocumentView, pdfHref: string | null): Promise<Response> {
  const page = await (<DocumentPage view={view} pdfHref={pdfHref} />);
  return c.html(`<!DOCTYPE html>${page}`);
}

const token = (c: Context<AppEnv>): string => c.req.param("token") ?? "";

export const publicPages = new Hono<AppEnv>()
  .use("/public/*", securityHeaders)
  .get(
    "/public/invoices/:token",
    describe({
      operationId: "getPublicInvoicePage",
      tag: "Public",
      summary: "The public page of an invoice",
      description: "An HTML page of a non-draft invoice (void included), with a pay button when a payment link exists.",
      success: { status: 200, description: "The page.", mediaType: "text/html" },
      problems: ["not_found"],
    }),
    async (c) => {
      const invoice = await findPublicInvoice(c.get("deps"), token(c));
      if (!invoice) throw notFound("invoice");
      const pdfHref = `/public/invoices/${encodeURIComponent(invoice.publicToken)}/pdf`;
      return htmlPage(c, invoiceView(toInvoice(invoice), c.get("deps")), pdfHref);
    },
  )
  .get(
    "/public/estimates/:token",
    describe({
      operationId: "getPublicEstimatePage",
      tag: "Public",
      summary: "The public page of an estimate",
      description: "An HTML page of a non-draft estimate.",
      success: { status: 200, description: "The page.", mediaType: "text/html" },
      problems: ["not_found"],
    }),
    async (c) => {
      const estimate = await findPublicEstimate(c.get("deps"), token(c));
      if (!estimate) throw notFound("estimate");
      return htmlPage(c, estimateView(estimate), null);
    },
  );
