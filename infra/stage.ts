import { withAccessLogFormat } from "./access-log";
import type { PublicThrottling } from "./stages";

/**
 * API Gateway's route throttling of the public paths (no API key; docs/payments.md "Throttling").
 * Requests over a route's rate get API Gateway's own 429 before any function runs. The limits are
 * per route for the whole stage (HTTP APIs throttle by route, not by caller; AWS WAF does not attach
 * to HTTP APIs): they cap what anonymous traffic can cost, the card processor's shared rate limit
 * first of all — the pay link is the only public path that may call it, and only when no stored
 * session can be reused (core/src/public/checkout.ts). Every `/public/…` route infra declares gets
 * the limit of its kind (the stage's settings, infra/stages.ts); authenticated routes keep the
 * account's default limits.
 *
 * The throttling of a route key, or undefined for a route that is not public.
 */
function publicThrottling(
  routeKey: string,
  limits: PublicThrottling,
): { rateLimit: number; burstLimit: number } | undefined {
  const path = routeKey.replace(/^\S+ /, "");
  if (!path.startsWith("/public/")) return undefined;
  if (path.endsWith("/pay")) return limits.payLink;
  if (path.endsWith("/pdf") || path.endsWith("/e-invoice")) return limits.file;
  return limits.page;
}

interface DeclaredRoutes {
  keys: string[];
  components: unknown[];
  throttling: PublicThrottling;
}
/** The routes, once all are declared: the stage's route settings name them, so it must come after. */
let declared!: (routes: DeclaredRoutes) => void;
const routesReady = new Promise<DeclaredRoutes>((resolve) => {
  declared = resolve;
});

/**
 * `transform.stage`: the access-log format (infra/access-log.ts) and the public routes' throttling.
 * API Gateway refuses route settings for a route key it does not have yet, and SST makes the stage
 * before the routes, so the stage waits for them (a dependency on a promise of the route components).
 * With a custom domain the API's `url` output comes from a mapping onto this stage, so the functions
 * behind the routes link the public base URL as a constant instead (infra/api.ts, publicUrl): no cycle.
 */
export function apiStage(
  args: Parameters<typeof withAccessLogFormat>[0] & { routeSettings?: unknown },
  opts: { dependsOn?: unknown },
): undefined {
  withAccessLogFormat(args);
  args.routeSettings = routesReady.then(({ keys, throttling }) =>
    keys.flatMap((routeKey) => {
      const limit = publicThrottling(routeKey, throttling);
      return limit ? [{ routeKey, throttlingRateLimit: limit.rateLimit, throttlingBurstLimit: limit.burstLimit }] : [];
    }),
  );
  opts.dependsOn = routesReady.then(({ components }) => components);
  return undefined;
}

/** Called once every route is declared (infra/api.ts), with the route keys, components and the stage's limits. */
export const routesDeclared = (keys: string[], components: unknown[], throttling: PublicThrottling): void =>
  declared({ keys, components, throttling });
