import type { Deps } from "../context";

/**
 * Absolute links to the public pages, for emails. The base is the API's URL (deployed: the linked
 * Api; locally: http://localhost:$PORT, see functions/src/deps.ts).
 */
const base = (deps: Pick<Deps, "publicBaseUrl">): string => (deps.publicBaseUrl ?? "").replace(/\/+$/, "");

export const publicInvoiceUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${base(deps)}/public/invoices/${encodeURIComponent(token)}`;

export const publicEstimateUrl = (deps: Pick<Deps, "publicBaseUrl">, token: string): string =>
  `${base(deps)}/public/estimates/${encodeURIComponent(token)}`;
