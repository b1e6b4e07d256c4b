import { createHash } from "node:crypto";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { notFound } from "@invoicing/core/errors";
import { toInvoice } from "@invoicing/core/invoices/model";
import { findPublicEstimate, findPublicInvoice } from "@invoicing/core/public/documents";
import { documentAssets } from "@invoicing/core/public/assets";
import { estimateView, invoiceView, type DocumentView, type PartyView } from "@invoicing/core/public/view";
import type { AppEnv } from "../env";
import { toPublicEstimate } from "../public-estimate";
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
:root { color-scheme: light; --ink: #1c1c21; --muted: #60606b; --rule: #e3e3e8; --accent: #2453d6; --shade: #f3f5fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #eef0f4; }
main { max-width: 860px; margin: 32px auto; background: #fff; border-radius: 10px; padding: 44px 48px; box-shadow: 0 1px 3px rgba(0,0,0,.08), 0 8px 24px rgba(0,0,0,.04); }
p { margin: 0; overflow-wrap: anywhere; }
.top { display: flex; justify-content: space-between; align-items: flex-start; gap: 24px; flex-wrap: wrap; padding-bottom: 24px; border-bottom: 1px solid var(--rule); }
.logo { display: block; max-width: 220px; max-height: 72px; }
.brand-name { font-size: 22px; font-weight: 700; overflow-wrap: anywhere; max-width: 420px; }
.heading { text-align: right; }
h1 { margin: 0; font-size: 26px; letter-spacing: -.01em; }
h2 { font-size: 11px; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); margin: 0 0 6px; }
.status { display: inline-block; margin-top: 8px; padding: 3px 12px; border-radius: 999px; font-weight: 600; font-size: 13px; background: #eef0f5; }
.status-paid, .status-accepted, .status-converted { background: #def7e5; color: #11632d; }
.status-overdue, .status-declined, .status-expired { background: #fde4e1; color: #a2261a; }
.status-void { background: #ececec; color: #555; text-decoration: line-through; }
.status-draft { background: #fff3cd; color: #7a5b00; }
.parties { display: grid; grid-template-columns: 1fr 1fr minmax(240px, 1fr); gap: 28px; margin: 28px 0 32px; }
.party .name { font-weight: 600; }
.party .detail, .muted { color: var(--muted); font-size: 13px; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 3px 14px; margin: 0; font-size: 14px; align-content: start; }
dt { color: var(--muted); } dd { margin: 0; text-align: right; overflow-wrap: anywhere; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); font-weight: 600; background: var(--shade); padding: 9px 8px; }
td { border-bottom: 1px solid var(--rule); padding: 11px 8px; vertical-align: top; }
td.description { white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; }
.num { text-align: right; white-space: nowrap; }
.summary { display: flex; justify-content: flex-end; margin-top: 18px; }
.totals { width: 100%; max-width: 380px; }
.totals div { display: flex; justify-content: space-between; gap: 16px; padding: 4px 0; }
.totals .tax { color: var(--muted); font-size: 14px; }
.totals .emphasis { font-weight: 700; font-size: 17px; border-top: 1px solid var(--ink); padding-top: 8px; margin-top: 4px; }
.totals .emphasis + .emphasis { border-top: none; margin-top: 0; padding-top: 4px; color: var(--accent); }
.exemption { margin-top: 16px; color: var(--muted); font-style: italic; font-size: 14px; }
.actions { display: flex; gap: 18px; align-items: center; margin: 28px 0 8px; flex-wrap: wrap; }
.pay { display: inline-block; background: var(--accent); color: #fff; text-decoration: none; font-weight: 600; padding: 12px 28px; border-radius: 8px; font-size: 16px; }
.pay:hover, .pay:focus { background: #1b3fa6; }
a { color: var(--accent); }
.payment { margin-top: 28px; border: 1px solid #c9d6fb; background: #f2f6ff; border-radius: 8px; padding: 16px 20px; }
.payment h2 { color: var(--accent); font-size: 12px; }
.payment dl { max-width: 520px; }
.payment dd { text-align: left; font-variant-numeric: tabular-nums; }
section.text { margin-top: 26px; }
section.text p { white-space: pre-wrap; font-size: 14px; }
.doc-footer { margin-top: 36px; padding-top: 14px; border-top: 1px solid var(--rule); color: var(--muted); font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
body > footer { text-align: center; color: var(--muted); font-size: 13px; margin: 0 0 32px; }
@media (max-width: 700px) {
  main { margin: 0; border-radius: 0; padding: 20px; }
  .parties { grid-template-columns: 1fr; }
  .heading { text-align: left; }
  .hide-narrow { display: none; }
}
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

function Party(props: { heading: string; party: PartyView; testId: string }) {
  const { party } = props;
  return (
    <div class="party" data-testid={props.testId}>
      <h2>{props.heading}</h2>
      <p class="name">{party.name}</p>
      {party.legalName ? <p class="muted">{party.legalName}</p> : null}
      {party.addressLines.map((line) => (
        <p>{line}</p>
      ))}
      {party.details.map((d) => (
        <p class="detail">
          {d.label}: {d.value}
        </p>
      ))}
    </div>
  );
}

const logoSrc = (view: DocumentView): string | null =>
  view.logo ? `data:${view.logo.contentType};base64,${Buffer.from(view.logo.bytes).toString("base64")}` : null;

function DocumentPage(props: { view: DocumentView; pdfHref: string | null }) {
  const { view } = props;
  const logo = logoSrc(view);
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
          <header class="top">
            <div class="brand">
              {logo ? (
                <img class="logo" src={logo} alt={view.seller?.name ?? "Logo"} data-testid="logo" />
              ) : view.seller ? (
                <div class="brand-name">{view.seller.name}</div>
              ) : null}
            </div>
            <div class="heading">
              <h1>{view.title}</h1>
              <span class={`status status-${view.status}`} data-testid="status">
                {view.statusLabel}
              </span>
            </div>
          </header>

          <div class="parties">
            {view.seller ? <Party heading="From" party={view.seller} testId="seller" /> : null}
            <Party heading="Bill to" party={view.billTo} testId="bill-to" />
            <dl data-testid="facts">
              {view.facts.map((d) => (
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

          <div class="summary">
            <div class="totals" data-testid="totals">
              {view.totals.flatMap((t) => [
                ...(t.label === "Tax"
                  ? view.taxRows.map((row) => (
                      <div class="tax">
                        <span>{row.label}</span>
                        <span>{row.value}</span>
                      </div>
                    ))
                  : []),
                <div class={t.emphasis ? "emphasis" : undefined}>
                  <span>{t.label}</span>
                  <span>{t.value}</span>
                </div>,
              ])}
            </div>
          </div>

          {view.taxExemptionReason ? <p class="exemption">{view.taxExemptionReason}</p> : null}

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

          {view.payment ? (
            <section class="payment" data-testid="payment">
              <h2>{view.payment.heading}</h2>
              <dl>
                {view.payment.rows.map((d) => (
                  <>
                    <dt>{d.label}</dt>
                    <dd>{d.value}</dd>
                  </>
                ))}
              </dl>
            </section>
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
          {view.footer ? <div class="doc-footer">{view.footer}</div> : null}
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
      const deps = c.get("deps");
      const invoice = await findPublicInvoice(deps, token(c));
      if (!invoice) throw notFound("invoice");
      const pdfHref = `/public/invoices/${encodeURIComponent(invoice.publicToken)}/pdf`;
      return htmlPage(c, invoiceView(toInvoice(invoice), await documentAssets(deps, invoice.userId, invoice), deps), pdfHref);
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
      const deps = c.get("deps");
      const estimate = await findPublicEstimate(deps, token(c));
      if (!estimate) throw notFound("estimate");
      const view = estimateView(toPublicEstimate(estimate), await documentAssets(deps, estimate.userId, estimate));
      return htmlPage(c, view, `/public/estimates/${encodeURIComponent(estimate.publicToken)}/pdf`);
    },
  );
