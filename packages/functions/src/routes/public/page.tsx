import type { Context } from "hono";
import type { DocumentView } from "@invoicing/core/public/view";
import type { AppEnv } from "../../env";
import { CSS } from "./style";

/**
 * The public page of an invoice or estimate, rendered on the server with hono/jsx, which escapes
 * every text and attribute value, so user text (descriptions, names, notes) is always shown as text.
 */
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
        <footer>
          {view.kind === "invoice"
            ? "Questions about this invoice? Reply to the email it came with."
            : "Questions about this estimate? Reply to the email it came with."}
        </footer>
      </body>
    </html>
  );
}

export async function htmlPage(c: Context<AppEnv>, view: DocumentView, pdfHref: string | null): Promise<Response> {
  const page = await (<DocumentPage view={view} pdfHref={pdfHref} />);
  return c.html(`<!DOCTYPE html>${page}`);
}
