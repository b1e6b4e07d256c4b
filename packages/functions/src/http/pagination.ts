import type { Context } from "hono";
import type { Page, PageRequest } from "@invoicing/core/db/pagination";
import { callerUrl } from "./caller-url";
import type { AppEnv } from "./app-env";

/**
 * A list response: a bare JSON array, with a Link to the next page when this one is full — at the
 * address the caller used (see caller-url.ts), so following it works behind API Gateway or a proxy.
 */
export function pageResponse<T, R>(
  c: Context<AppEnv>,
  page: Page<T>,
  request: PageRequest,
  toResource: (item: T) => R,
): Response {
  if (page.nextCursor) {
    const url = callerUrl(c);
    url.searchParams.set("offset", String(request.offset + request.limit));
    url.searchParams.set("cursor", page.nextCursor);
    c.header("Link", `<${url.toString()}>; rel="next"`);
  }
  return c.json(page.items.map(toResource));
}
