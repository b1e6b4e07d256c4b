import type { Deps } from "../deps";

/**
 * Links to the public pages, in one place: for emails, the page's pay button, the stored pay link,
 * the pay route's redirects and the card processor's return pages. The base is the API's URL
 * (deployed: the linked Api; locally: http://localhost:$PORT, see functions/src/capabilities/create-deps.ts).
 */
const base = (deps: Pick<Deps, "publicBaseUrl">): string => (deps.publicBaseUrl ?? "").replace(/\/+$/, "");

/** The invoice page's path, for a redirect on this host. */
export const publicInvoicePath = (token: string): string => `/public/invoices/${encodeURIComponent(token)}`;

export const publicInvoiceUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${base(deps)}${publicInvoicePath(token)}`;

/** The pay button's target: it replaces an expired card processor session before redirecting. */
export const publicInvoicePayUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${publicInvoiceUrl(deps, token)}/pay`;

export const publicEstimateUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${base(deps)}/public/estimates/${encodeURIComponent(token)}`;

export const publicCreditNoteUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${base(deps)}/public/credit-notes/${encodeURIComponent(token)}`;
