import { randomUUID } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { authenticate, mayChange, parseKey, type Principal } from "@invoicing/core/keys/api-keys";
import type { Deps } from "@invoicing/core/deps";
import { authorizedDb, insufficientScope } from "@invoicing/core/keys/authorized-db";
import { noteVerified, recentlyVerified } from "@invoicing/core/keys/recent-keys";
import { DEFAULT_API_RATE_LIMIT, knownRefusal, takeRequest } from "@invoicing/core/limits/rate-limit";
import { publicTokenBucketKey, userLimitsKey } from "@invoicing/core/limits/user-limits";
import { setLogUser, withLogContext } from "@invoicing/core/observability/context-log";
import { partOf } from "./describe";
import type { AppEnv } from "./app-env";
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
  // Every log line of the request carries its id (and the user's, once the key names it): core's
  // log() reads them from this scope (core/src/observability/context-log.ts).
  const lambda = (c.env as { lambdaContext?: { awsRequestId?: string } } | undefined)?.lambdaContext;
  await withLogContext({ requestId: id, source: "api", awsRequestId: lambda?.awsRequestId }, () => next());
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

/** Whether a route's handler says the route is public (`describe({ public: true })`). */
const isPublicRoute = (handler: unknown): boolean => {
  const part = partOf(handler);
  return part?.kind === "description" && part.description.public === true;
};

const unauthorized = (detail: string) =>
  new HttpProblem("unauthorized", detail, { "WWW-Authenticate": 'Bearer realm="invoicing"' });

/** Methods that only read: all a `read_only` key may use (API.md section 2). */
const READ_METHODS = new Set(["GET", "HEAD"]);

/**
 * Bearer API key → the acting user's context. Runs before routing, so 401 wins over 404.
 *
 * A key that names its user (docs/auth.md) is not looked up here: the request goes on with that
 * user's context over an authorized Db, whose first read fetches the key item along with the record
 * (keys/authorized-db.ts), so a GET is one DynamoDB round trip. Whatever the route answered, the
 * answer waits for the key check, and a refused key replaces it with the 401. A legacy key
 * (`inv_<secret>`) is looked up first, as before: two round trips.
 *
 * Scope: a `read_only` key on a route that matched with any method but GET/HEAD is 403
 * insufficient_scope, in API.md's order — after 401, 404 (no route) and 405, which the route match
 * decides, and before anything the route says (413, 415, 400, 404 of an id, 412, 409, 422), so the
 * 403 replaces the route's answer as the 401 does. The authorized Db refuses such a request's reads
 * and writes, so nothing changes. The scope is on the key item the check reads anyway: no extra
 * request.
 *
 * `verifiedKey(c)` lets a route wait for the key before work that costs more than reading its body
 * (decompressing an image: binaryBody), so a made-up key never buys that work.
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
    const changes = !READ_METHODS.has(c.req.method);
    // Only a request some route serves can be out of scope: an unknown route or method stays 404/405.
    const scoped = changes && matchedRoutes(c).some((route) => route.method === c.req.method);
    if (claim.userId === undefined) {
      const principal = await authenticate(deps.db, match[1]!, deps.clock());
      if (!principal) throw refused();
      if (scoped && !mayChange(principal)) throw insufficientScope();
      await takeUserPlace(deps, principal.userId);
      c.set("ctx", { ...deps, userId: principal.userId });
      c.set("keyCheck", () => Promise.resolve());
      setLogUser(principal.userId);
      return runAs(principal, next);
    }
    const userId = claim.userId;
    const allowed = (principal: Principal | undefined): void => {
      if (!principal) throw refused();
      if (scoped && !mayChange(principal)) throw insufficientScope();
    };
    // A key this container verified a moment ago sends its reads (and its rate-limit place) along
    // with its check: one round trip. Any other key is checked alone first, and a refused one costs
    // that one GetItem: nothing of the named user's is read, no body parsed, no name resolved
    // (keys/recent-keys.ts, docs/auth.md).
    let speculative = recentlyVerified(claim.hash);
    // A user this container already knows to be past its limit: the route reads nothing and the
    // table is not asked for a place. Its key verified here a moment ago, the 429 comes from memory
    // with no request at all, so a hot user's excess costs nothing; any other key is checked alone
    // first (a forged one gets its 401). A key revoked within that moment, or one whose scope would
    // refuse the route, gets this 429 instead of its 401 or 403: a refusal either way.
    const knownPast = deps.rateLimits && knownRefusal(userLimitsKey(userId), userRate(deps), deps.clock());
    if (knownPast && speculative) throw knownPast;
    if (knownPast) speculative = false;
    let place: Promise<void> | undefined;
    if (speculative) place = settled(takeUserPlace(deps, userId));
    const authorized = authorizedDb(deps.db, { ...claim, userId }, deps.clock(), { changes, writesAfter: place });
    if (!speculative) {
      const principal = await authorized.principal();
      try {
        allowed(principal);
      } finally {
        await principal?.touch;
      }
      noteVerified(claim.hash);
      await takeUserPlace(deps, userId);
    }
    c.set("ctx", { ...deps, db: authorized.db, userId });
    // The user the key names; a key that turns out forged ends in 401 before anything is written.
    setLogUser(userId);
    c.set("keyCheck", async () => {
      allowed(await authorized.principal());
      await place;
    });
    let principal: Principal | undefined;
    try {
      await next();
    } finally {
      principal = await authorized.principal();
      await principal?.touch;
    }
    try {
      allowed(principal);
      if (speculative) noteVerified(claim.hash);
      await place; // a request past its user's limit is answered 429, whatever the route said
    } catch (error) {
      c.res = undefined; // else Hono copies the route's headers (Location, ETag) onto the 401, 403 or 429
      throw error;
    }
  };

/**
 * Takes one place in the user's request bucket (API_RATE_LIMIT or the user's own limit; 429
 * rate_limited past it). No limits configured (in-process tests that do not test them): nothing.
 */
async function takeUserPlace(deps: Deps, userId: string): Promise<void> {
  if (!deps.rateLimits) return;
  await takeRequest(deps.db, userLimitsKey(userId), userRate(deps), deps.clock());
}

const userRate = (deps: Deps) => ({ perSecond: deps.rateLimits?.requestsPerSecond ?? DEFAULT_API_RATE_LIMIT });

/** A promise awaited later (after the route): observed now, so its rejection never goes unhandled. */
function settled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * Public pages, PDFs and pay links: one bucket per public token (PUBLIC_RATE_LIMIT per second,
 * bursts of twice that; 429 rate_limited past it), taken before anything else is done, so one
 * hammered link is refused on its own and never slows another's (API.md section 16).
 */
export const publicRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const deps = c.get("deps");
  const token = PUBLIC_TOKEN.exec(c.req.path)?.[1];
  if (deps.rateLimits && token) {
    await takeRequest(
      deps.db,
      publicTokenBucketKey(token),
      { perSecond: deps.rateLimits.publicPerSecond, expireAfterSeconds: 60 },
      deps.clock(),
    );
  }
  await next();
};

/** `/public/<kind>/<token>…`: the token of a public link. */
const PUBLIC_TOKEN = /^\/public\/[^/]+\/([^/]+)/;

/**
 * Resolves once the request's API key is known good and allowed this request (else throws its 401
 * or 403). For work that a made-up key must not be able to make the service do: decompressing an
 * uploaded image, anything whose cost is more than reading the (≤ 256 KiB) body. Public routes have
 * no key: it resolves at once.
 */
export async function verifiedKey(c: Context<AppEnv>): Promise<void> {
  await c.get("keyCheck")?.();
}

const refused = () => unauthorized("the API key is unknown or revoked");

async function runAs(principal: Principal, next: () => Promise<void>): Promise<void> {
  try {
    await next();
  } finally {
    await principal.touch;
  }
}
