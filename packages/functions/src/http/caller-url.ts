import type { Context } from "hono";
import type { AppEnv } from "./app-env";

/**
 * The URL the caller used, for links the response hands back (the `Link` of a list). The request's
 * own URL is what this process saw, which behind a proxy is not the caller's address:
 * - Through API Gateway (the Lambda adapter puts the event's requestContext in `c.env`), the caller
 *   used https and `requestContext.domainName` — the custom domain when one is mapped.
 * - Behind a proxy the operator declared trusted (`TRUST_PROXY=1`: a load balancer or CloudFront in
 *   front of `npm start` or of API Gateway), its `X-Forwarded-Host` and `X-Forwarded-Proto` win.
 * X-Forwarded-* is never trusted by default: any client can send it, and API Gateway passes a
 * client's X-Forwarded-Host through, so trusting it unasked would let a caller pick the host of the
 * links it is given. Values are taken only when well-formed (first of a comma list).
 */
export function callerUrl(c: Context<AppEnv>): URL {
  const url = new URL(c.req.url);
  const gatewayHost = gatewayDomain(c.env);
  if (gatewayHost && HOST.test(gatewayHost)) {
    url.protocol = "https:";
    url.host = gatewayHost;
  }
  if (c.get("deps").trustProxy) {
    const host = firstValue(c.req.header("x-forwarded-host"));
    const proto = firstValue(c.req.header("x-forwarded-proto"))?.toLowerCase();
    if (proto === "http" || proto === "https") url.protocol = `${proto}:`;
    if (host && HOST.test(host)) url.host = host;
  }
  return url;
}

/** A DNS name or bracketed IPv6 address, with an optional port. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

const firstValue = (header: string | undefined): string | undefined => header?.split(",")[0]?.trim() || undefined;

function gatewayDomain(env: unknown): string | undefined {
  const context = (env as { requestContext?: { domainName?: unknown } } | undefined)?.requestContext;
  return typeof context?.domainName === "string" ? context.domainName : undefined;
}
