import { crc32, deflateSync } from "node:zlib";
import UPNG from "@pdf-lib/upng";
import { type PDFDict, PDFDocument, PDFName, type PDFNumber, PDFRawStream } from "pdf-lib";
import { beforeAll, describe, expect, it } from "vitest";
import { flattenPng } from "@invoicing/core/profile/png-flatten";
import { line, newClient, newInvoice } from "../invoices/fixtures";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";

/**
 * Issue 38: the heaviest logo PUT /profile/logo accepts (2000 × 2000, 16-bit RGBA, interlaced) made
 * every PDF 20–35× slower, pdf-lib decoding and compressing it again each time. Logos are flattened
 * once at upload (core/src/profile/png-flatten.ts). Checked by the work a PDF carries (the embedded
 * image's pixels and depth, counted) and by the ratio API.md section 9 names, measured in this run
 * (CPU time of the same renders, the one timed comparison the issue asks for).
 */
let env: TestEnv;

function chunk(type: string, body: Buffer): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  body.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}

const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/**
 * 16-bit RGBA, interlaced: the left half opaque red, the right half fully transparent blue; rows
 * unfiltered. Written here, independently of the code under test.
 */
function heaviestLogo(size = 2000): Buffer {
  const parts: Buffer[] = [];
  for (const [x0, y0, dx, dy] of ADAM7) {
    const w = Math.ceil((size - x0) / dx);
    const h = Math.ceil((size - y0) / dy);
    for (let r = 0; r < h; r++) {
      const row = Buffer.alloc(1 + w * 8);
      for (let c = 0; c < w; c++) {
        const x = x0 + c * dx;
        const left = x < size / 2;
        row.writeUInt16BE(left ? 0xffff : 0, 1 + c * 8);
        row.writeUInt16BE(0, 3 + c * 8);
        row.writeUInt16BE(left ? 0 : 0xffff, 5 + c * 8);
        row.writeUInt16BE(left ? 0xffff : 0, 7 + c * 8);
      }
      parts.push(row);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 16;
  ihdr[9] = 6;
  ihdr[12] = 1;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.concat(parts), { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A small logo: 120 × 40, 8-bit RGB, not interlaced. */
function smallLogo(): Buffer {
  const rows = Buffer.alloc(40 * (1 + 120 * 3), 0x40);
  for (let y = 0; y < 40; y++) rows[y * (1 + 120 * 3)] = 0;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(120, 0);
  ihdr.writeUInt32BE(40, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The images a PDF embeds: width, height, bits per component (counted, not timed). */
async function embeddedImages(bytes: Uint8Array) {
  const pdf = await PDFDocument.load(bytes);
  const images: { width: number; height: number; bits: number }[] = [];
  for (const [, object] of pdf.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream)) continue;
    const dict: PDFDict = object.dict;
    if (dict.get(PDFName.of("Subtype")) !== PDFName.of("Image")) continue;
    const num = (key: string) => (dict.get(PDFName.of(key)) as PDFNumber).asNumber();
    images.push({ width: num("Width"), height: num("Height"), bits: num("BitsPerComponent") });
  }
  return images;
}

async function userWithLogo(logo: Buffer): Promise<{ user: TestUser; invoiceId: number }> {
  const user = await env.user();
  const put = await user.call("PUT", "/profile/logo", new Uint8Array(logo), { "Content-Type": "image/png" });
  expect(put.status).toBe(204);
  const { id: clientId } = await newClient(user);
  const invoice = await newInvoice(user, { clientId, lineItems: [line()] });
  return { user, invoiceId: invoice.id };
}

async function pdf(user: TestUser, invoiceId: number): Promise<Uint8Array> {
  const res = await env.app.request(`http://localhost/invoices/${invoiceId}/pdf`, {
    headers: { Authorization: `Bearer ${user.key}` },
  });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

beforeAll(async () => {
  env = await createTestEnv();
});

describe("logos are flattened once, at upload", () => {
  it("the flattened copy is 8-bit RGBA within 510 × 168, and keeps the picture (read by another decoder)", () => {
    const flat = flattenPng(heaviestLogo());
    expect({ width: flat.width, height: flat.height }).toEqual({ width: 168, height: 168 });
    const decoded = UPNG.decode(new Uint8Array(flat.bytes).buffer);
    expect({ depth: decoded.depth, ctype: decoded.ctype }).toEqual({ depth: 8, ctype: 6 });
    const rgba = new Uint8Array(UPNG.toRGBA8(decoded)[0]!);
    const at = (x: number, y: number) => [...rgba.subarray((y * 168 + x) * 4, (y * 168 + x) * 4 + 4)];
    expect(at(10, 80)).toEqual([255, 0, 0, 255]); // opaque red on the left
    expect(at(160, 80)[3]).toBe(0); // transparent on the right
  });

  it("a PDF with the heaviest accepted logo carries a small 8-bit image, and costs at most 1.5× one with a small logo", async () => {
    const heavy = await userWithLogo(heaviestLogo());
    const small = await userWithLogo(smallLogo());
    // Counted: what pdf-lib had to decode and compress again for the PDF.
    const images = await embeddedImages(await pdf(heavy.user, heavy.invoiceId));
    for (const image of images) {
      expect(image.width * image.height).toBeLessThanOrEqual(510 * 168);
      expect(image.bits).toBe(8);
    }
    expect(images.length).toBeGreaterThan(0);

    // The ratio, in this run: the least CPU time of each path over interleaved renders. The least is
    // what the render itself costs; the rest is what else the machine and the process did meanwhile
    // (a loaded CI machine's garbage collection or another file's work), which a sum would count.
    // The best of three such rounds: on a quiet machine one round gives ~1.2×; at load ~20 one
    // round once gave 1.6×. Drawing the unflattened logo costs 20–35× in every round.
    await pdf(small.user, small.invoiceId); // warm both paths first
    await pdf(heavy.user, heavy.invoiceId);
    const cpuOf = async (user: typeof small.user, invoiceId: number) => {
      const start = process.cpuUsage();
      await pdf(user, invoiceId);
      const used = process.cpuUsage(start);
      return used.user + used.system;
    };
    const round = async () => {
      let heavyCpu = Number.POSITIVE_INFINITY;
      let smallCpu = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 8; i++) {
        smallCpu = Math.min(smallCpu, await cpuOf(small.user, small.invoiceId));
        heavyCpu = Math.min(heavyCpu, await cpuOf(heavy.user, heavy.invoiceId));
      }
      return heavyCpu / smallCpu;
    };
    let best = await round();
    for (let i = 1; i < 3 && best > 1.5; i++) best = Math.min(best, await round());
    expect(best).toBeLessThanOrEqual(1.5);
  });
});
