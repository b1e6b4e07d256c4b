import { Hono, type MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../../http/app-env";
import { STYLE_HASH } from "./style";

/**
 * Sent with every /public response, pages, PDFs and 404s alike: hono's secure-headers with a strict
 * CSP (no script at all, only our own stylesheet by hash), so an injection would be stopped even if
 * escaping failed. Only the headers chosen here; the others secure-headers knows are left off.
 */
const security = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: [`'sha256-${STYLE_HASH}'`],
    imgSrc: ["'self'", "data:"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
  xContentTypeOptions: true,
  // The token is in the URL: it must not travel to the payment site in a Referer.
  referrerPolicy: "no-referrer",
  xFrameOptions: "DENY",
  crossOriginOpenerPolicy: true,
  crossOriginEmbedderPolicy: false,
  crossOriginResourcePolicy: false,
  originAgentCluster: false,
  strictTransportSecurity: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/** Mounted before the other route modules, so it wraps every /public/* route, theirs too. */
export const securityHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await security(c, next);
  // A page shows live status (paid, void): never from a shared cache, never stale.
  c.res.headers.set("Cache-Control", "no-store");
  c.res.headers.set("X-Robots-Tag", "noindex, nofollow");
};

/**
 * The headers alone, for a function that serves no public page itself (the API: the pages are the
 * Documents function's, infra/api.ts): its other /public answers (404s, 405s) carry them all the same.
 */
export const publicHeaders = new Hono<AppEnv>().use("/public/*", securityHeaders);
