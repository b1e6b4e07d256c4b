import { withAccessLogFormat } from "./access-log";

/**
 * API Gateway's route throttling of the public paths (no API key; docs/payments.md "Throttling").
 * Requests over a route's rate get API Gateway's own 429 before any function runs. The limits are
 * per route for the whole stage (HTTP APIs throttle by route, not by caller; AWS WAF does not attach
 * to HTTP APIs): they cap what anonymous traffic can cost, the card processor's shared rate limit
 * first of all — the pay link is the only public path that may call it, and only when no stored
 * session can be reused (core/src/payments/checkout.ts). Authenticated routes keep the account's
 * default limits.
 */
export const PUBLIC_ROUTE_THROTTLING: Record<string, { rateLimit: number; burstLimit: number }> = {
  "ANY /public/invoices/{token}/pay": { rateLimit: 10, burstLimit: 20 },
  "ANY /public/invoices/{token}": { rateLimit: 50, burstLimit: 100 },
  "ANY /public/estimates/{token}": { rateLimit: 50, burstLimit: 100 },
  "ANY /public/invoices/{token}/pdf": { rateLimit: 20, burstLimit: 40 },
  "ANY /public/estimates/{token}/pdf": { rateLimit: 20, burstLimit: 40 },
  "ANY /public/invoices/{token}/e-invoice": { rateLimit: 20, burstLimit: 40 },
  // A credit note's public documents, as an invoice's.
  "ANY /public/credit-notes/{token}": { rateLimit: 50, burstLimit: 100 },
  "ANY /public/credit-notes/{token}/pdf": { rateLimit: 20, burstLimit: 40 },
  "ANY /public/credit-notes/{token}/e-invoice": { rateLimit: 20, burstLimit: 40 },
};

/** The routes, once all are declared: the stage's route settings name them, so it must come after. */
let declared!: (routes: unknown[]) => void;
const routesReady = new Promise<unknown[]>((resolve) => {
  declared = resolve;
});

/**
 * `transform.stage`: the access-log format (infra/access-log.ts) and the public routes' throttling.
 * API Gateway refuses route settings for a route key it does not have yet, and SST makes the stage
 * before the routes, so the stage waits for them (a dependency on a promise of the route components).
 * This holds while the API has no custom domain: with one, the API's URL (linked into the functions
 * behind the routes) comes from a mapping onto this stage, and the wait would be a cycle.
 */
export function apiStage(
  args: Parameters<typeof withAccessLogFormat>[0] & { routeSettings?: unknown },
  opts: { dependsOn?: unknown },
): undefined {
  withAccessLogFormat(args);
  args.routeSettings = Object.entries(PUBLIC_ROUTE_THROTTLING).map(([routeKey, limit]) => ({
    routeKey,
    throttlingRateLimit: limit.rateLimit,
    throttlingBurstLimit: limit.burstLimit,
  }));
  opts.dependsOn = routesReady;
  return undefined;
}

/** Called once every route is declared (infra/api.ts). */
export const routesDeclared = (routes: unknown[]): void => declared(routes);
