import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { attachMeter } from "../support/metering";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { makePng, pngDeclaring } from "../support/images";

/**
 * Issue 29, finding 1: `PUT /profile/logo` decompressed whatever size a PNG declared (up to
 * 20000 × 20000) before its 2000-pixel limit was checked, let image data be up to twice its size,
 * and did it all before the API key was verified. Now:
 * - the key is verified before the body is even read: a made-up (or read-only) key gets its answer
 *   without the service reading, let alone inflating, the upload (observed by the request's body
 *   stream, which is never pulled);
 * - a PNG is refused by the size it declares, before decompressing (the answer names that size,
 *   where the old order answered that its data would not inflate);
 * - its image data must inflate to exactly the length its size needs: not a byte less (a 65-byte
 *   file declaring 2000 × 2000 was accepted), not a byte more.
 */
let env: TestEnv;
let alice: TestUser;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
});

/** Grey rows of a `width` × `height` 8-bit image: a filter byte (0) and `width` pixels each. */
const rows = (width: number, height: number) => Buffer.alloc((width + 1) * height);

/** A request whose body is a stream that records whether the server ever pulled from it. */
function watchedUpload(bytes: Uint8Array) {
  const watch = { pulled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        watch.pulled = true;
        controller.enqueue(bytes);
        controller.close();
      },
    },
    { highWaterMark: 0 }, // pulled only when read, not in advance
  );
  return { watch, body };
}

async function upload(key: string, bytes: Uint8Array) {
  const { watch, body } = watchedUpload(bytes);
  const res = await env.app.request("http://localhost/profile/logo", {
    method: "PUT",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "image/png" },
    body,
    duplex: "half",
  } as RequestInit);
  return { res, pulled: watch.pulled, body: (await res.json().catch(() => undefined)) as any };
}

const putPng = (bytes: Uint8Array) =>
  alice.call("PUT", "/profile/logo", new Uint8Array(bytes), { "Content-Type": "image/png" });

describe("the key before the body", () => {
  // 249 KB of real image data declaring 16000 × 16000, as in the finding; garbage would do as well,
  // since it is never read.
  const hostile = pngDeclaring(16000, 16000, deflateSync(rows(16000, 200)));

  it("a made-up key of the right shape gets 401 without its upload being read", async () => {
    const forged = `inv_${alice.userId}_${randomBytes(32).toString("base64url")}`;
    const { res, pulled } = await upload(forged, hostile);
    expect(res.status).toBe(401);
    expect(pulled).toBe(false);
  });

  it("a read-only key gets 403 without its upload being read", async () => {
    const made = await alice.call("POST", "/api-keys", { scope: "read_only" });
    const { res, pulled, body } = await upload(made.body.key, hostile);
    expect([res.status, body?.code]).toEqual([403, "insufficient_scope"]);
    expect(pulled).toBe(false);
  });

  it("a good key: the key item is read first, then the upload is checked and stored in one transaction", async () => {
    const meter = attachMeter(env.deps.db.doc);
    try {
      const { res, pulled } = await upload(alice.key, makePng(20, 20));
      expect(res.status).toBe(204);
      expect(pulled).toBe(true);
      expect(meter.byCommand).toMatchObject({ GetItemCommand: 1, TransactWriteItemsCommand: 1 });
    } finally {
      meter.detach();
    }
  });
});

describe("a PNG's size decides before its data is decompressed", () => {
  it("a PNG declaring 16000 × 16000 is refused by that size, not by what its data would inflate to", async () => {
    const problem = expectProblem(await putPng(pngDeclaring(16000, 16000, randomBytes(2000))), 400, "validation_error");
    expect(problem.errors).toEqual([{ path: "", message: "the body is 16000 × 16000 pixels; at most 2000 × 2000" }]);
    // Past the old 20000-pixel guard too.
    const huge = expectProblem(await putPng(pngDeclaring(20001, 3, randomBytes(20))), 400, "validation_error");
    expect(huge.errors?.[0]?.message).toBe("the body is 20001 × 3 pixels; at most 2000 × 2000");
  });

  it("a 65-byte PNG declaring 2000 × 2000 is refused: its data is far less than that size needs", async () => {
    const tiny = pngDeclaring(2000, 2000, deflateSync(Buffer.alloc(0)));
    expect(tiny.length).toBe(65);
    const problem = expectProblem(await putPng(tiny), 400, "validation_error");
    expect(problem.errors?.[0]?.message).toBe("the body is a damaged PNG image (less image data than its size needs)");
  });

  it("image data one byte short or one byte long is refused; exactly the size is stored", async () => {
    const short = pngDeclaring(10, 10, deflateSync(rows(10, 10).subarray(1)));
    const long = pngDeclaring(10, 10, deflateSync(Buffer.concat([rows(10, 10), Buffer.alloc(1)])));
    // A zip bomb declaring a small image: 64 MB of zeros in 64 KB, stopped at 110 bytes.
    const bomb = pngDeclaring(10, 10, deflateSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 }));
    expect(bomb.length).toBeLessThan(256 * 1024);
    const messages = [];
    for (const png of [short, long, bomb]) {
      messages.push(expectProblem(await putPng(png), 400, "validation_error").errors?.[0]?.message);
    }
    expect(messages).toEqual([
      "the body is a damaged PNG image (less image data than its size needs)",
      "the body is a damaged PNG image (more image data than its size holds)",
      "the body is a damaged PNG image (more image data than its size holds)",
    ]);
    expect((await putPng(pngDeclaring(10, 10, deflateSync(rows(10, 10))))).status).toBe(204);
  });

  it("takes interlaced PNGs (seven passes, exactly their length) and the largest allowed size", async () => {
    // libpng's own test image: 91 × 69 RGBA, Adam7-interlaced.
    const interlaced = readFileSync(new URL("../fixtures/interlaced.png", import.meta.url));
    expect((await putPng(interlaced)).status).toBe(204);
    expect((await putPng(makePng(2000, 2000))).status).toBe(204);
    expect((await putPng(makePng(1, 1))).status).toBe(204);
  });
});
