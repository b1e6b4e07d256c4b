import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { authenticate, parseKey, type Principal } from "@invoicing/core/keys/api-keys";
import { authorizedDb } from "@invoicing/core/keys/authorized-db";
import { partOf } from "../openapi/describe";
import type { AppEnv } from "./env";
import { HttpProblem } from "./problems";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Every response carries X-Request-Id: the caller's when well-formed, else a fresh one. Not hono's
 * request-id middleware: it accepts `=` and refuses `.`, where the documented shape (and the fuzz
 * test) is 1–128 of `[A-Za-z0-9._-]`.
 */
export const requestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  const incoming = c.req.header("x-request-id");
  const id = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set("X-Request-Id", id);
};

/**
 * Headers every response gets:
 * - `Cache-Control: no-store` unless the route chose its own (the OpenAPI document and its page are
 *   public and cacheable): authenticated answers, public pages and PDFs hold personal data and live
 *   status (paid, void), which no shared or browser cache may keep or serve stale.
 * - `X-Content-Type-Options: nosniff`: JSON and problem+json (and anything else) are never
 *   reinterpreted by a browser as HTML or script.
 */
export const responseHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (!c.res.headers.has("Cache-Control")) c.res.headers.set("Cache-Control", "no-store");
  c.res.headers.set("X-Content-Type-Options", "nosniff");
};

/** The public pages' space: every path under /public/ is reachable without an API key (404s too). */
export const isPublicSpace = (path: string): boolean => /^\/public(\/|$)/.test(path);

/**
 * Whether a path is reachable without an API key: under /public/, or the path of a route that
 * says so (`describe({ public: true })`) among `routes` — the routes of the app being built
 * (app/build-app.ts), so the list is the route modules' own and nothing keeps it by hand.
 */
export function publicPaths(routes: readonly { path: string; handler: unknown }[]): (path: string) => boolean {
  const exact = routes
    .filter((r) => isPublicRoute(r.handler))
    .map((r) => new RegExp(`^${r.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:\w+/g, "[^/]+")}$`));
  return (path) => isPublicSpace(path) || exact.some((re) => re.test(path));
}

const isPublicRoute = (handler: unknown): boolean => {
  const part = partOf(handler);
  return part?.kind === "description" && part.description.public === true;
};

const unauthorized = (detail: string) =>
  new HttpProblem("unauthorized", detail, { "WWW-Authenticate": 'Bearer realm="invoicing"' });

/**
 * Bearer API key → the acting user's context. Runs before routing, so 401 wins over 404.
 *
 * A key that names its user (docs/auth.md) is not looked up here: the request goes on with that
 * user's context over an authorized Db, whose first read fetches the key item along with the record
 * (keys/authorized-db.ts), so a GET is one DynamoDB round trip. Whatever the route answered, the
 * answer waits for the key check, and a refused key replaces it with the 401. A legacy key
 * (`inv_<secret>`) is looked up first, as before: two round trips.
 */
export const auth =
  (isPublic: (path: string) => boolean): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    if (isPublic(c.req.path)) return next();
    const header = c.req.header("authorization");
    const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
    if (!match) throw unauthorized("send an API key as Authorization: Bearer <key>");
    const deps = c.get("deps");
    const claim = parseKey(match[1]!);
    if (!claim) throw refused();
    if (claim.userId === undefined) {
      const principal = await authenticate(deps.db, match[1]!, deps.clock());
      if (!principal) throw refused();
      c.set("ctx", { ...deps, userId: principal.userId });
      return runAs(principal, next);
    }
    const authorized = authorizedDb(deps.db, { ...claim, userId: claim.userId }, deps.clock());
    c.set("ctx", { ...deps, db: authorized.db, userId: claim.userId });
    let principal: Principal | undefined;
    try {
      await next();
    } finally {
      principal = await authorized.principal();
      await principal?.touch;
    }
    if (!principal) {
      c.res = undefined; // else Hono copies the route's headers (Location, ETag) onto the 401
      throw refused();
    }
  };

const refused = () => unauthorized("the API key is unknown or revoked");

async function runAs(principal: Principal, next: () => Promise<void>): Promise<void> {
  try {
    await next();
  } finally {
    await principal.touch;
  }
}
