/**
 * Idempotency-Key on every POST: Stripe's semantics over the records of
 * core/src/idempotency/records.ts. docs/idempotency.md has the design and why it is not
 * @aws-lambda-powertools/idempotency.
 *
 * Where it sits: after auth (401 first) and only on requests a POST route matched (404 unknown route
 * and 405 stay first); it reads the body itself, so 413 → 415 → 400 keep API.md's order. Its own
 * refusals (409 idempotency_key_in_use, 422 idempotency_key_reused) rank after the route's 400, 404
 * and 412, so they are not answered up front: the route runs, and core's commit() refuses at the
 * moment of the change (refusingHook), before any write.
 */
import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler, Next } from "hono";
import { matchedRoutes } from "hono/route";
import type { RouterRoute } from "hono/types";
import type { Ctx } from "@invoicing/core/deps";
import { DomainError } from "@invoicing/core/errors";
import {
  claimHook,
  claimKey,
  completeKey,
  completeRecovered,
  isLeaseLive,
  refusingHook,
  releaseKey,
  type Claim,
  type KeyRecord,
  type StoredResponse,
} from "@invoicing/core/idempotency/records";
import { readJson } from "./body";
import { descriptionOf, partOf, type RecordKind } from "./describe";
import type { AppEnv } from "./app-env";
import { errorToResponse, log, validationProblem } from "./problems";

/** 1–255 visible ASCII characters. */
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

/** What a replay gives back besides status and body (API.md: Location, ETag; and the body's type). */
const KEPT_HEADERS = ["content-type", "location", "etag"];

/** The app itself, to read a record through its own GET route when a response must be rebuilt. */
interface SelfFetch {
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
  /** Its routes, whose descriptions name the GET that reads each kind of record (`rebuilds`). */
  readonly routes: RouterRoute[];
}

export function idempotency(app: SelfFetch): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const matched = matchedRoutes(c);
    const route = matched.find((r) => r.method === "POST")?.path;
    // What the route keeps is in its description (describe({ idempotency })).
    const keeps = route === undefined ? undefined : descriptionOf(matched, "POST", route)?.idempotency;
    // Public POSTs (the card processor webhook) have no user to scope a key to.
    const ctx = c.get("ctx") as Ctx | undefined;
    const key = c.req.header("idempotency-key");
    if (route === undefined || keeps === "not_kept" || !ctx || key === undefined) return next();

    const body = await readJson(c, { optional: true }); // 413 → 415 → malformed 400, cached for the route
    if (!KEY_SHAPE.test(key)) {
      throw validationProblem([{ path: "Idempotency-Key", message: "must be 1 to 255 visible ASCII characters" }]);
    }
    const print = requestFingerprint(c.req.method, c.req.path, body);
    const outcome = await claimKey(ctx, key, print);
    const withoutSecret = keeps === "kept_without_secret";
    if ("claimed" in outcome) return runClaimed(c, next, ctx, outcome.claimed, withoutSecret);

    const record = outcome.existing;
    switch (judge(record, print, ctx.clock())) {
      case "replay":
        return replay(record.response!);
      case "recover":
        return recover(c, app, ctx, record, withoutSecret);
      case "in_use":
        return runRefused(
          c,
          next,
          ctx,
          new DomainError(
            "idempotency_key_in_use",
            "a request with this Idempotency-Key is still running; retry shortly",
          ),
        );
      case "reused":
        return runRefused(
          c,
          next,
          ctx,
          new DomainError("idempotency_key_reused", "this Idempotency-Key was used for another method, path or body"),
        );
    }
  };
}

/**
 * The request is the same when method, path and body are; the body compared as the JSON value the
 * app acts on (key order and spacing do not make another request). An empty action body is `{}`.
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method} ${path}\n${canonicalJson(body)}`)
    .digest("hex");
}

/** Output text queued between values, in canonicalJson's work stack. */
class Emit {
  constructor(readonly text: string) {}
}

/**
 * Sorted-key JSON. With an explicit stack, not recursion: a body may nest tens of thousands of
 * levels within the 256 KiB limit, and recursing on it overflowed the call stack (a 500; found by
 * test/reliability/fuzz.test.ts). Same output as the recursive form, so stored fingerprints hold.
 */
function canonicalJson(root: unknown): string {
  const out: string[] = [];
  const todo: unknown[] = [root];
  while (todo.length > 0) {
    const value = todo.pop();
    if (value instanceof Emit) {
      out.push(value.text);
    } else if (Array.isArray(value)) {
      todo.push(new Emit("]"));
      for (let i = value.length - 1; i >= 0; i--) {
        todo.push(value[i]);
        if (i > 0) todo.push(new Emit(","));
      }
      todo.push(new Emit("["));
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      todo.push(new Emit("}"));
      for (let i = entries.length - 1; i >= 0; i--) {
        todo.push(entries[i]![1]);
        todo.push(new Emit(`${i > 0 ? "," : ""}${JSON.stringify(entries[i]![0])}:`));
      }
      todo.push(new Emit("{"));
    } else {
      out.push(JSON.stringify(value) ?? "");
    }
  }
  return out.join("");
}

type Verdict = "replay" | "recover" | "in_use" | "reused";

/** What a record another request left means for this one. */
function judge(record: KeyRecord, print: string, now: Date): Verdict {
  // Its owner may still be working (or storing its response): in use, whatever this request is.
  if (record.state === "in_progress" || (record.state === "committed" && isLeaseLive(record, now))) return "in_use";
  if (record.fingerprint !== print) return "reused";
  // committed with the lease over: the change happened, its response was never stored.
  return record.state === "completed" && record.response ? "replay" : "recover";
}

/** This request holds the key: its change marks the record, its outcome completes or releases it. */
async function runClaimed(
  c: Context<AppEnv>,
  next: Next,
  ctx: Ctx,
  claim: Claim,
  withoutSecret: boolean,
): Promise<void> {
  c.set("ctx", { ...ctx, commitHook: claimHook(ctx, claim) });
  let succeeded = false;
  try {
    await next(); // route errors arrive here as their problem responses (Hono's onError)
    succeeded = isSuccess(c.res);
  } finally {
    try {
      if (succeeded) await completeKey(ctx, claim, await snapshot(c.res, withoutSecret));
      else await releaseKey(ctx, claim);
    } catch (error) {
      // The answer stands: a record left in_progress frees itself when its lease ends, and one left
      // committed has its response rebuilt by the next retry (see recover).
      log(c, "warn", "idempotency record not updated", error);
    }
  }
}

/**
 * The key stops this request, but the route's own 400, 404 and 412 come first:
 * the route runs with a hook that refuses the change, and the refusal replaces any answer that
 * ranks after it (409, 422) or a success that changed nothing.
 */
async function runRefused(c: Context<AppEnv>, next: Next, ctx: Ctx, refusal: DomainError): Promise<void> {
  c.set("ctx", { ...ctx, commitHook: refusingHook(refusal) });
  await next();
  if (isSuccess(c.res) || c.res.status === 409 || c.res.status === 422) {
    c.res = undefined; // else Hono copies the replaced response's headers (Location, ETag) over
    c.res = errorToResponse(c, refusal);
  }
}

/**
 * The owner died after its change and before storing the response. The change must not run again,
 * so the response is rebuilt from the record the change produced, read through its own GET route
 * (the one place that renders it): 201 with Location when the request created it (POST /clients,
 * /estimates/{id}/convert → an invoice), else 200 — the API's success codes.
 */
async function recover(
  c: Context<AppEnv>,
  app: SelfFetch,
  ctx: Ctx,
  record: KeyRecord,
  withoutSecret: boolean,
): Promise<Response> {
  const path = resourcePath(app, record.resultRef);
  if (!path) throw new Error(`cannot rebuild the response of idempotency record ${record.sk}: no result recorded`);
  const url = new URL(path, c.req.url);
  const read = await app.fetch(
    new Request(url, {
      headers: { authorization: c.req.header("authorization") ?? "", "x-request-id": c.get("requestId") },
    }),
    c.env,
  );
  // Gone since (e.g. a draft deleted): there is no result to return, and the change still must not rerun.
  if (read.status !== 200) return read;
  const created = !(c.req.path === path || c.req.path.startsWith(`${path}/`));
  const headers: Record<string, string> = {};
  for (const name of ["content-type", "etag"]) {
    const value = read.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  if (created) headers.location = path;
  let body = await read.text();
  // The GET of an endpoint shows no secret; the rebuilt answer has the field, null as in a replay.
  if (withoutSecret) body = JSON.stringify({ ...JSON.parse(body), secret: null });
  const response: StoredResponse = { status: created ? 201 : 200, headers, body };
  try {
    await completeRecovered(ctx, record, response);
  } catch (error) {
    log(c, "warn", "rebuilt idempotent response not stored", error);
  }
  return replay(response);
}

/**
 * The path of the record a ref names (`KIND#<id>…`, ids zero-padded): the GET route whose
 * description `rebuilds` that kind, its path parameters filled with the ids in order.
 */
function resourcePath(app: SelfFetch, ref: string | undefined): string | undefined {
  const [kind, ...ids] = ref?.split("#") ?? [];
  if (!kind || !/^[A-Z_]+$/.test(kind) || ids.length === 0 || !ids.every((id) => /^\d+$/.test(id))) return undefined;
  const route = app.routes.find((r) => r.method === "GET" && readerOf(r) === kind);
  const params = route?.path.match(/:\w+/g) ?? [];
  if (!route || params.length !== ids.length) return undefined;
  let i = 0;
  return route.path.replace(/:\w+/g, () => ids[i++]!.replace(/^0+(?=\d)/, ""));
}

/** The kind of record a GET route reads, from its description. */
function readerOf(route: RouterRoute): RecordKind | undefined {
  const part = partOf(route.handler);
  return part?.kind === "description" ? part.description.rebuilds : undefined;
}

const isSuccess = (res: Response): boolean => res.status >= 200 && res.status < 300;

async function snapshot(res: Response, withoutSecret: boolean): Promise<StoredResponse> {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  let body = await res.clone().text();
  if (withoutSecret) body = JSON.stringify({ ...JSON.parse(body), secret: null });
  return { status: res.status, headers, body };
}

const replay = (stored: StoredResponse): Response =>
  new Response(stored.body, { status: stored.status, headers: { ...stored.headers, "Idempotent-Replayed": "true" } });
