import type { Deps } from "../context";

/**
 * Absolute links to the public pages, for emails. The base is the API's URL (deployed: the linked
 * Api; locally: http://localhost:$PORT, see functions/src/deps.ts).
 */
const base = (deps: Pick<Deps, "publicBaseUrl">): string => (deps.publicBaseUrl ?? "").replace(/\/+$/, "");

export const publicInvoiceUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${base(deps)}/public/invoices/${encodeURIComponent(token)}`;

/** The pay button's target: it replaces an expired card processor session before redirecting. */
export const publicInvoicePayUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${publicInvoiceUrl(deps, token)}/pay`;

export const publicEstimateUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${base(deps)}/public/estimates/${encodeURIComponent(token)}`;
