import { Hono, type Context, type ErrorHandler, type MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/env";
import { isPublicRoute, markPublic } from "../http/middleware";

/**
 * A route module loaded at the first request that needs it, not at the function's cold start.
 * The API function has ~70 operations, and a container mostly serves a few: importing every route
 * module (its valibot schemas, describe() words and the core use cases behind it) at init was most
 * of what its cold start spent beyond a bare Hono app's (README, Benchmarks). Its bundle is built
 * with code splitting (infra/api.ts), so each loader below is a chunk of its own.
 */
export type RouteLoader = () => Promise<Hono<AppEnv>>;

/**
 * One registered route of a module, in the order the module registers it: what the app must know
 * up front (to route, to answer 404 and 405, to let a public path through auth) without loading the
 * module. Derived from the modules themselves (routeTableOf), at build time (infra/api.ts).
 */
export interface RouteEntry {
  module: string;
  /** "GET", …, or "ALL" for a module's `.use()` middleware. */
  method: string;
  path: string;
  /** `describe({ public: true })`: reachable without an API key. */
  public?: true;
}

/** Loads every module (in order), for the table and for anything that needs them all. */
export async function loadRouteModules(loaders: Record<string, RouteLoader>): Promise<Record<string, Hono<AppEnv>>> {
  const entries = await Promise.all(Object.entries(loaders).map(async ([name, load]) => [name, await load()] as const));
  return Object.fromEntries(entries);
}

/**
 * The routes of some modules, in the order they are mounted: one entry per module, method and path
 * (a route's chain of handlers is one entry).
 */
export function routeTableOf(modules: Record<string, Hono<AppEnv>>): RouteEntry[] {
  const table: RouteEntry[] = [];
  for (const [module, routes] of Object.entries(modules)) {
    for (const route of routes.routes) {
      if (table.some((e) => e.module === module && e.method === route.method && e.path === route.path)) continue;
      const isPublic = routes.routes.some(
        (r) => r.method === route.method && r.path === route.path && isPublicRoute(r.handler),
      );
      table.push({ module, method: route.method, path: route.path, ...(isPublic ? { public: true as const } : {}) });
    }
  }
  return table;
}

/**
 * One Hono app with every route of the table, each of which loads its module at its first request
 * and then runs the module's own chain for that method and path, exactly as mounting the module
 * (`app.route("/", module)`) would: the same context (params, validated input, variables), and each
 * handler's error turned into its response where it is thrown (`onError`), as Hono's compose does,
 * so middleware that looks at the response after `next()` sees it.
 */
export function lazyRoutes(
  table: readonly RouteEntry[],
  loaders: Record<string, RouteLoader>,
  onError: ErrorHandler<AppEnv>,
): Hono<AppEnv> {
  const loading = new Map<string, Promise<Hono<AppEnv>>>();
  const load = (module: string): Promise<Hono<AppEnv>> => {
    let promise = loading.get(module);
    if (!promise) {
      const loader = loaders[module];
      if (!loader) throw new Error(`route table names ${module}, which has no loader`);
      promise = loader();
      // A failed import is not cached: the next request tries again.
      promise.catch(() => loading.delete(module));
      loading.set(module, promise);
    }
    return promise;
  };
  const app = new Hono<AppEnv>();
  for (const entry of table) {
    let chain: MiddlewareHandler<AppEnv> | undefined;
    const handler: MiddlewareHandler<AppEnv> = async (c, next) => {
      if (!chain) {
        const module = await load(entry.module);
        const handlers = module.routes
          .filter((r) => r.method === entry.method && r.path === entry.path)
          .map((r) => r.handler as MiddlewareHandler<AppEnv>);
        if (handlers.length === 0) throw new Error(`${entry.module} has no ${entry.method} ${entry.path}`);
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
