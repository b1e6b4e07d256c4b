import { Hono, type Context, type ErrorHandler, type MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/env";
import { isPublicRoute, markPublic } from "../http/middleware";

/**
 * Route modules loaded at the first request that reaches one of their routes, not at the
 * function's cold start: what the API function does (lambda/api.ts), whose bundle is built with
 * code splitting (infra/api.ts), so its route modules (their valibot schemas, describe() words and
 * the core use cases behind them) are a chunk of their own. One chunk for all of them, not one per
 * module: the modules share most of core, so a chunk per module loaded most of it for any one
 * route anyway, plus the cost of each further file (docs/benchmarks.md, measured).
 */
type LoadModules = () => Promise<readonly Hono<AppEnv>[]>;

/**
 * One registered route, in the order the modules register them: what the app must know up front
 * (to route, to answer 404 and 405, to let a public path through auth) without loading the modules.
 * Derived from the modules themselves (routeTableOf), at build time (infra/api.ts).
 */
export interface RouteEntry {
  /** The module's place in the list of modules. */
  module: number;
  /** "GET", …, or "ALL" for a module's `.use()` middleware. */
  method: string;
  path: string;
  /** `describe({ public: true })`: reachable without an API key. */
  public?: true;
}

/** The routes of some modules, in the order they are mounted: one entry per module, method and path. */
export function routeTableOf(modules: readonly Hono<AppEnv>[]): RouteEntry[] {
  const table: RouteEntry[] = [];
  for (const [module, { routes }] of modules.entries()) {
    for (const { method, path } of routes) {
      if (table.some((e) => e.module === module && e.method === method && e.path === path)) continue;
      const isPublic = routes.some((r) => r.method === method && r.path === path && isPublicRoute(r.handler));
      table.push({ module, method, path, ...(isPublic ? { public: true as const } : {}) });
    }
  }
  return table;
}

/**
 * One Hono app with every route of the table, each of which loads the modules at the first request
 * that reaches it and then runs its module's own chain for that method and path, exactly as mounting
 * the module (`app.route("/", module)`) would: the same context (params, validated input, variables),
 * and each handler's error turned into its response where it is thrown (`onError`), as Hono's
 * compose does, so middleware that looks at the response after `next()` sees it.
 */
export function lazyRoutes(
  table: readonly RouteEntry[],
  loadModules: LoadModules,
  onError: ErrorHandler<AppEnv>,
): Hono<AppEnv> {
  let loading: Promise<readonly Hono<AppEnv>[]> | undefined;
  const load = (): Promise<readonly Hono<AppEnv>[]> => {
    if (!loading) {
      loading = loadModules();
      // A failed import is not kept: the next request tries again.
      loading.catch(() => {
        loading = undefined;
      });
    }
    return loading;
  };
  const app = new Hono<AppEnv>();
  for (const entry of table) {
    let chain: MiddlewareHandler<AppEnv> | undefined;
    const handler: MiddlewareHandler<AppEnv> = async (c, next) => {
      if (!chain) {
        const module = (await load())[entry.module];
        const handlers = (module?.routes ?? [])
          .filter((r) => r.method === entry.method && r.path === entry.path)
          .map((r) => r.handler as MiddlewareHandler<AppEnv>);
        if (handlers.length === 0) throw new Error(`route module ${entry.module} has no ${entry.method} ${entry.path}`);
        chain = composeChain(handlers, onError);
      }
      return chain(c, next);
    };
    if (entry.public) markPublic(handler);
    app.on(entry.method, entry.path, handler);
  }
  return app;
}

/** A route's chain as one middleware: Hono's compose (hono/dist/compose.js), which it does not export. */
function composeChain(handlers: MiddlewareHandler<AppEnv>[], onError: ErrorHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  return async (c: Context<AppEnv>, next) => {
    const dispatch = async (i: number): Promise<void> => {
      const handler = i < handlers.length ? handlers[i]! : next;
      let res: unknown;
      let isError = false;
      try {
        res = await handler(c, () => dispatch(i + 1));
      } catch (error) {
        if (!(error instanceof Error)) throw error;
        c.error = error;
        res = await onError(error, c);
        isError = true;
      }
      if (res instanceof Response && (c.finalized === false || isError)) c.res = res;
    };
    await dispatch(0);
  };
}
