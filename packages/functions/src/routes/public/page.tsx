import type { Context } from "hono";
import type { DocumentView, PartyView } from "@invoicing/core/capabilities/document-view";
import type { AppEnv } from "../../http/app-env";
import { CSS } from "./style";

/**
 * The public page of an invoice or estimate, rendered on the server with hono/jsx, which escapes
 * every text and attribute value, so user text (descriptions, names, notes) is always shown as text.
 */
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

const KIND_WORDS: Record<DocumentView["kind"], string> = {
  invoice: "invoice",
  estimate: "estimate",
  credit_note: "credit note",
};

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

          {view.delivery ? (
            <p class="delivery" data-testid="delivery">
              {view.delivery}
            </p>
          ) : null}

          {view.reference ? (
            <section class="correction" data-testid="correction">
              <p class="reference">{unbroken(view.reference)}</p>
              {view.memo ? <p class="memo">{view.memo}</p> : null}
            </section>
          ) : null}

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
                  <td class="description">
                    {line.description}
                    {/* The tax column is hidden on a phone: each line's rate goes under its description. */}
                    <span class="rate-narrow">Tax {line.taxRate}</span>
                  </td>
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
                  <span>{unbroken(t.label)}</span>
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
        <footer>{`Questions about this ${KIND_WORDS[view.kind]}? Reply to the email it came with.`}</footer>
      </body>
    </html>
  );
}

export async function htmlPage(c: Context<AppEnv>, view: DocumentView, pdfHref: string | null): Promise<Response> {
  const page = await (<DocumentPage view={view} pdfHref={pdfHref} />);
  return c.html(`<!DOCTYPE html>${page}`);
}

/**
 * A document number in a text (INV-000001, CN-000001) kept on one line: a narrow screen would
 * otherwise break "Deducted from invoice INV-000001" after the hyphen, splitting the number.
 */
function unbroken(text: string) {
  return text.split(/([A-Z]+-\d+)/).map((part, i) => (i % 2 === 1 ? <span class="nowrap">{part}</span> : part));
}
