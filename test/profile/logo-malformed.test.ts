import { deflateSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, expectProblem, type TestEnv, type TestUser } from "../support/env";
import { pngChunk } from "../support/images";

/**
 * A PNG that the upload's checks accept (profile/image.ts: chunks, CRCs, image data of exactly its
 * size) can still hold a chunk the flattening at upload cannot read (profile/png-flatten.ts): a
 * greyscale PNG whose `tRNS` chunk is 1 byte where the PNG spec says 2. Bad input is a 400 on the
 * body (API.md section 3), never a 500, and nothing is stored.
 */
let env: TestEnv;
let alice: TestUser;

beforeAll(async () => {
  env = await createTestEnv();
  alice = await env.user();
});

/** A 2 × 2 8-bit grey PNG with a tRNS chunk of `trnsBytes` bytes. */
function greyPngWithTransparency(trnsBytes: number): Uint8Array {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(2, 0);
  ihdr.writeUInt32BE(2, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const rows = Buffer.from([0, 0x10, 0x20, 0, 0x30, 0x40]); // a filter byte and 2 pixels per row
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk("IHDR", ihdr),
      pngChunk("tRNS", Buffer.alloc(trnsBytes)),
      pngChunk("IDAT", deflateSync(rows)),
      pngChunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

const putPng = (bytes: Uint8Array) => alice.call("PUT", "/profile/logo", bytes, { "Content-Type": "image/png" });

describe("PUT /profile/logo with a PNG its flattening cannot read", () => {
  it("a 1-byte tRNS in a grey PNG: 400 on the body, no logo stored", async () => {
    const res = await putPng(greyPngWithTransparency(1));
    const problem = expectProblem(res, 400, "validation_error");
    expect(problem.errors).toEqual([{ path: "", message: expect.stringContaining("damaged PNG") }]);
    expectProblem(await alice.call("GET", "/profile/logo"), 404, "not_found");
  });

  it("the same PNG with the 2-byte tRNS the spec asks for is stored", async () => {
    expect((await putPng(greyPngWithTransparency(2))).status).toBe(204);
    expect((await alice.call("GET", "/profile/logo")).status).toBe(200);
  });
});
