import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "./app-env";
import { HttpProblem } from "./problems";

const MAX_BODY_BYTES = 256 * 1024;

/**
 * Reads the request body once, in the API's order: 413 (too large) → 415 (not JSON) → 400
 * (malformed). Routes call it after the route matched, so an unknown route stays a 404 and a wrong
 * method a 405 whatever the body. An absent body reads as `undefined`.
 */
export async function readRawBody(c: Context<AppEnv>): Promise<string> {
  const cached = c.get("rawBody");
  if (cached !== undefined) return cached;
  const text = new TextDecoder("utf-8").decode(await readBodyBytes(c));
  c.set("rawBody", text);
  return text;
}

/**
 * The body's bytes (413 when over the limit), read once; binary bodies (an uploaded image) use these.
 * Hono's bodyLimit does the counting (the declared Content-Length, else the bytes as they stream),
 * run here, inside a route's body chain (http/validators.ts) and the idempotency layer, rather than
 * as a middleware for every request: that would buffer a body before auth and routing, where 401,
 * 404 and 405 must win over 413.
 */
export async function readBodyBytes(c: Context<AppEnv>): Promise<Uint8Array> {
  const cached = c.get("bodyBytes");
  if (cached !== undefined) return cached;
  await limit(c, async () => undefined);
  const bytes = c.req.raw.body ? new Uint8Array(await c.req.raw.arrayBuffer()) : new Uint8Array(0);
  c.set("bodyBytes", bytes);
  return bytes;
}

const limit = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw tooLarge();
  },
});

/**
 * The rest of a body over the limit is never read, so the connection is closed after the answer
 * (`Connection: close`, as nginx does after a 413): a client that sent the next request on it would
 * otherwise meet a hung-up socket (npm start's server; API Gateway manages its own connections).
 */
const tooLarge = () =>
  new HttpProblem("payload_too_large", `request bodies are limited to ${MAX_BODY_BYTES} bytes`, {
    Connection: "close",
  });

/**
 * Whatever answered a request (a 401 or 403 that replaced the route's answer, a 404, the 413
 * itself), a body that was not read and may be over the limit closes the connection after the
 * answer, as the 413 does: an unread body larger than the server drains would otherwise be cut off
 * by a reset while the client still uploads, or meet the client's next request on the same
 * keep-alive connection. A body declared within the limit is left to the server, which reads and
 * drops it (npm start's @hono/node-server), so its connection stays alive.
 */
export const closeAfterUnreadBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (!c.req.raw.body || c.get("bodyBytes") !== undefined) return;
  const declared = c.req.header("content-length");
  if (declared !== undefined && Number(declared) <= MAX_BODY_BYTES) return;
  c.res.headers.set("Connection", "close");
};

/** True for application/json and any +json type, with or without parameters. */
function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/**
 * The parsed JSON body. With `optional` (action endpoints) an empty body is `{}`; otherwise an empty
 * body is `undefined` and the schema reports what is missing.
 */
export async function readJson(c: Context<AppEnv>, options: { optional?: boolean } = {}): Promise<unknown> {
  const text = await readRawBody(c);
  if (text.length === 0) return options.optional ? {} : undefined;
  if (!isJsonContentType(c.req.header("content-type"))) {
    throw new HttpProblem("unsupported_media_type", "a request body must be sent with Content-Type: application/json");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpProblem("malformed_json", "the request body is not valid JSON");
  }
}
