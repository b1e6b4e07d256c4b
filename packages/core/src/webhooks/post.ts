import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { checkWebhookUrl, type UrlPolicy } from "../capabilities/url-guard";

/**
 * One webhook POST: the URL is checked (form and every resolved address, see url-guard.ts) and the
 * connection goes to the address just checked, never to a second DNS answer. The whole attempt
 * (DNS lookup, connect, send, answer) has `timeoutMs`: a resolver that never answers cannot hold an
 * attempt, and the slots the attempts share, longer than a receiver that never answers. The
 * answer's body is read and dropped (at most 64 KiB).
 */
interface PostOutcome {
  ok: boolean;
  responseStatus: number | null;
  /** Why it failed, in words safe to show the endpoint's owner (no secret, no body). */
  error: string | null;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  policy: UrlPolicy & { timeoutMs: number },
): Promise<PostOutcome> {
  const deadline = Date.now() + policy.timeoutMs;
  const timedOut: PostOutcome = { ok: false, responseStatus: null, error: `no answer within ${policy.timeoutMs} ms` };
  let checked;
  let lookupTimer: NodeJS.Timeout | undefined;
  try {
    // The lookup itself cannot be cancelled (getaddrinfo); the attempt stops waiting for it.
    checked = await Promise.race([
      checkWebhookUrl(rawUrl, policy),
      new Promise<"timeout">((resolve) => {
        lookupTimer = setTimeout(() => resolve("timeout"), policy.timeoutMs);
      }),
    ]);
  } catch (error) {
    return { ok: false, responseStatus: null, error: error instanceof Error ? error.message : "url not allowed" };
  } finally {
    clearTimeout(lookupTimer);
  }
  if (checked === "timeout" || Date.now() >= deadline) return timedOut;
  const { url, addresses } = checked;
  const pinned = addresses[0]!;
  const lookup: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const options: RequestOptions = {
    method: "POST",
    headers: {
      ...headers,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "user-agent": "invoicing-webhooks/1",
    },
    lookup,
  };
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const done = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const req = send(url, options, (res) => {
      let received = 0;
      res.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) res.destroy();
      });
      const status = res.statusCode ?? 0;
      const finish = () =>
        done({
          ok: status >= 200 && status < 300,
          responseStatus: status,
          error: status >= 200 && status < 300 ? null : `HTTP ${status}`,
        });
      res.on("end", finish);
      res.on("close", finish);
      res.on("error", finish);
    });
    const timer = setTimeout(() => done(timedOut), deadline - Date.now());
    req.on("error", (error: NodeJS.ErrnoException) =>
      done({ ok: false, responseStatus: null, error: `connection failed (${error.code ?? error.name})` }),
    );
    req.end(body);
  });
}
