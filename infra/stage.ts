import { withAccessLogFormat } from "./access-log";

/**
 * API Gateway's route throttling of the public paths (no API key; docs/payments.md "Throttling").
 * Requests over a route's rate get API Gateway's own 429 before any function runs. The limits are
 * per route for the whole stage (HTTP APIs throttle by route, not by caller; AWS WAF does not attach
 * to HTTP APIs): they cap what anonymous traffic can cost, the card processor's shared rate limit
 * first of all — the pay link is the only public path that may call it, and only when no stored
 * session can be reused (core/src/public/checkout.ts). Every `/public/…` route infra declares gets
 * the limit of its kind; authenticated routes keep the account's default limits.
 */
const PUBLIC_THROTTLING = {
  // Ceilings for the whole stage, well above one token's limit (PUBLIC_RATE_LIMIT, 10 a second,
  // enforced per token by the app: docs/limits.md), so one hammered link is refused by its own
  // limit and never takes the stage's share from every other business's links. The pay link's
  // stays under the card processor's live-mode rate limit (100 a second for the whole account).
  payLink: { rateLimit: 50, burstLimit: 100 },
  file: { rateLimit: 200, burstLimit: 400 },
  page: { rateLimit: 500, burstLimit: 1000 },
} as const;

/** The throttling of a route key, or undefined for a route that is not public. */
function publicThrottling(routeKey: string): { rateLimit: number; burstLimit: number } | undefined {
  const path = routeKey.replace(/^\S+ /, "");
  if (!path.startsWith("/public/")) return undefined;
  if (path.endsWith("/pay")) return PUBLIC_THROTTLING.payLink;
  if (path.endsWith("/pdf") || path.endsWith("/e-invoice")) return PUBLIC_THROTTLING.file;
  return PUBLIC_THROTTLING.page;
}

/** The routes, once all are declared: the stage's route settings name them, so it must come after. */
let declared!: (routes: { keys: string[]; components: unknown[] }) => void;
const routesReady = new Promise<{ keys: string[]; components: unknown[] }>((resolve) => {
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
  args.routeSettings = routesReady.then(({ keys }) =>
    keys.flatMap((routeKey) => {
      const limit = publicThrottling(routeKey);
      return limit ? [{ routeKey, throttlingRateLimit: limit.rateLimit, throttlingBurstLimit: limit.burstLimit }] : [];
    }),
  );
  opts.dependsOn = routesReady.then(({ components }) => components);
  return undefined;
}

/** Called once every route is declared (infra/api.ts), with the route keys and components. */
export const routesDeclared = (keys: string[], components: unknown[]): void => declared({ keys, components });
