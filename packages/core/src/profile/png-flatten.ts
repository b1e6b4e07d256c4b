import { createHash } from "node:crypto";
import { deflateSync, inflateSync } from "node:zlib";
import { PNG_SIGNATURE, pngChunk, pngHeader, pngPasses, pngStride, readPngChunks, type PngHeader } from "./png";

/**
 * A PNG logo made cheap to draw, once: decoded (any bit depth, colour type, interlaced or not),
 * scaled down to fit DOCUMENT_LOGO_BOX and written back as a plain 8-bit RGBA PNG (issue 38).
 *
 * Why: pdf-lib decodes a PNG and compresses it again on every PDF it draws. The heaviest logo
 * PUT /profile/logo accepts (2000 × 2000, 16-bit RGBA, interlaced: 31 KB on the wire, 32 MB of
 * samples) made every PDF 20–35× slower — in the API, the Documents function and every email
 * attachment. A document draws the logo in at most 170 × 56 points, so 3× that in pixels
 * (≈ 216 dpi) is all a PDF or a page needs; the flattened copy holds at most 510 × 168 pixels.
 *
 * Done at upload (profile/logo.ts stores the copy on the logo's item, beside the original, which
 * GET /profile/logo still returns; a smaller box when a copy that size would not fit the item). Logos stored before are flattened at their first use in a container, cached by
 * the hash of their bytes (flattenedLogo below). Pure TypeScript over node:zlib: no image library.
 * The input is a PNG that image.ts's inspectImage accepted (well-formed, exact data length).
 */
export const DOCUMENT_LOGO_BOX = { width: 510, height: 168 } as const;

export interface FlatPng {
  bytes: Uint8Array;
  width: number;
  height: number;
}

/** The PNG decoded once, flattened into `box` (and smaller boxes, by `smaller`, until `fits`). */
export function flattenPng(
  input: Uint8Array,
  fits: (flat: FlatPng) => boolean = () => true,
  box: { width: number; height: number } = DOCUMENT_LOGO_BOX,
): FlatPng {
  const image = decode(Buffer.from(input.buffer, input.byteOffset, input.byteLength));
  for (let b = box; ; b = { width: Math.floor(b.width * 0.75), height: Math.floor(b.height * 0.75) }) {
    const flat = flattenInto(image, b);
    if (fits(flat) || b.width < 8 || b.height < 8) return flat;
  }
}

function flattenInto(image: Decoded, box: { width: number; height: number }): FlatPng {
  const scale = Math.min(box.width / image.width, box.height / image.height, 1);
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const rgba = scale === 1 ? image.rgba : shrink(image.rgba, image.width, image.height, width, height);
  return { bytes: encode(rgba, width, height), width, height };
}

const cache = new Map<string, FlatPng>();
const CACHE_MAX = 100;

/** flattenPng for a logo stored before uploads were flattened: once per logo per container. */
export function flattenedLogo(bytes: Uint8Array): FlatPng {
  const id = createHash("sha256").update(bytes).digest("hex");
  let flat = cache.get(id);
  if (!flat) {
    flat = flattenPng(bytes);
    cache.set(id, flat);
    if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value!);
  }
  return flat;
}

interface Decoded {
  width: number;
  height: number;
  /** 8-bit RGBA, row after row. */
  rgba: Uint8Array;
}

function decode(buf: Buffer): Decoded {
  let header: PngHeader | undefined;
  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  const data: Buffer[] = [];
  for (const chunk of readPngChunks(buf)) {
    if (typeof chunk === "string") throw new Error(`the PNG ${chunk}`);
    if (chunk.type === "IHDR") header = pngHeader(chunk.body);
    else if (chunk.type === "PLTE") palette = chunk.body;
    else if (chunk.type === "tRNS") transparency = chunk.body;
    else if (chunk.type === "IDAT") data.push(chunk.body);
  }
  if (!header?.channels || header.width === 0 || header.height === 0) throw new Error("not a PNG of a known kind");
  const { width, height, depth, color, channels } = header;
  const raw = inflateSync(Buffer.concat(data));
  const bitsPerPixel = channels * depth;
  const bpp = Math.max(1, bitsPerPixel >> 3); // bytes to the corresponding byte of the pixel before
  const rgba = new Uint8Array(width * height * 4);
  const sample = sampler(depth);
  const toRgba = pixelReader(color, depth, channels, palette, transparency, sample);
  let at = 0;
  for (const pass of pngPasses(width, height, header.interlace === 1)) {
    const stride = pngStride(pass.width, bitsPerPixel);
    let previous = new Uint8Array(stride);
    for (let row = 0; row < pass.height; row++) {
      const filter = raw[at]!;
      const line = Uint8Array.from(raw.subarray(at + 1, at + 1 + stride));
      at += 1 + stride;
      unfilter(filter, line, previous, bpp);
      const y = pass.y0 + row * pass.dy;
      for (let col = 0; col < pass.width; col++) toRgba(line, col, rgba, (y * width + pass.x0 + col * pass.dx) * 4);
      previous = line;
    }
  }
  return { width, height, rgba };
}

/** PNG spec 9: undoes a scanline's filter in place, given the unfiltered line above. */
function unfilter(filter: number, line: Uint8Array, up: Uint8Array, bpp: number): void {
  for (let i = 0; i < line.length; i++) {
    const a = i >= bpp ? line[i - bpp]! : 0;
    const b = up[i]!;
    const c = i >= bpp ? up[i - bpp]! : 0;
    let add = 0;
    if (filter === 1) add = a;
    else if (filter === 2) add = b;
    else if (filter === 3) add = (a + b) >> 1;
    else if (filter === 4) {
      const p = a + b - c;
      const pa = Math.abs(p - a),
        pb = Math.abs(p - b),
        pc = Math.abs(p - c);
      add = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    line[i] = (line[i]! + add) & 0xff;
  }
}

/** Reads the n-th sample of a line at a bit depth, as its raw value. */
function sampler(depth: number): (line: Uint8Array, n: number) => number {
  if (depth === 16) return (line, n) => (line[2 * n]! << 8) | line[2 * n + 1]!;
  if (depth === 8) return (line, n) => line[n]!;
  const perByte = 8 / depth;
  const mask = (1 << depth) - 1;
  return (line, n) => (line[Math.floor(n / perByte)]! >> (8 - depth * ((n % perByte) + 1))) & mask;
}

type PixelReader = (line: Uint8Array, col: number, out: Uint8Array, at: number) => void;

function pixelReader(
  color: number,
  depth: number,
  channels: number,
  palette: Buffer | undefined,
  transparency: Buffer | undefined,
  sample: (line: Uint8Array, n: number) => number,
): PixelReader {
  const max = (1 << depth) - 1;
  const to8 = (v: number) => (depth === 16 ? v >> 8 : Math.round((v * 255) / max));
  // tRNS for grey and RGB: one colour (at the image's depth) that is fully transparent.
  const key = transparency && (color === 0 || color === 2) ? transparency : undefined;
  const keyGrey = key && color === 0 ? key.readUInt16BE(0) : -1;
  const keyRgb = key && color === 2 ? [key.readUInt16BE(0), key.readUInt16BE(2), key.readUInt16BE(4)] : undefined;
  return (line, col, out, at) => {
    const n = col * channels;
    if (color === 3) {
      const index = sample(line, n);
      out[at] = palette?.[index * 3] ?? 0;
      out[at + 1] = palette?.[index * 3 + 1] ?? 0;
      out[at + 2] = palette?.[index * 3 + 2] ?? 0;
      out[at + 3] = transparency && index < transparency.length ? transparency[index]! : 255;
      return;
    }
    if (color === 0 || color === 4) {
      const grey = sample(line, n);
      out[at] = out[at + 1] = out[at + 2] = to8(grey);
      out[at + 3] = color === 4 ? to8(sample(line, n + 1)) : grey === keyGrey ? 0 : 255;
      return;
    }
    const r = sample(line, n),
      g = sample(line, n + 1),
      b = sample(line, n + 2);
    out[at] = to8(r);
    out[at + 1] = to8(g);
    out[at + 2] = to8(b);
    if (color === 6) out[at + 3] = to8(sample(line, n + 3));
    else out[at + 3] = keyRgb && r === keyRgb[0] && g === keyRgb[1] && b === keyRgb[2] ? 0 : 255;
  };
}

/**
 * Box filter: each target pixel is the mean of the source pixels that fall in it, colours weighted
 * by their alpha (so transparent pixels' colour never bleeds into the edge).
 */
function shrink(src: Uint8Array, width: number, height: number, tw: number, th: number): Uint8Array {
  const sums = new Float64Array(tw * th * 5); // r·a, g·a, b·a, a, count
  for (let y = 0; y < height; y++) {
    const ty = Math.min(th - 1, Math.floor((y * th) / height));
    for (let x = 0; x < width; x++) {
      const tx = Math.min(tw - 1, Math.floor((x * tw) / width));
      const s = (y * width + x) * 4;
      const t = (ty * tw + tx) * 5;
      const alpha = src[s + 3]!;
      sums[t] = sums[t]! + src[s]! * alpha;
      sums[t + 1] = sums[t + 1]! + src[s + 1]! * alpha;
      sums[t + 2] = sums[t + 2]! + src[s + 2]! * alpha;
      sums[t + 3] = sums[t + 3]! + alpha;
      sums[t + 4] = sums[t + 4]! + 1;
    }
  }
  const out = new Uint8Array(tw * th * 4);
  for (let i = 0; i < tw * th; i++) {
    const alpha = sums[i * 5 + 3]!;
    const count = sums[i * 5 + 4]!;
    if (alpha > 0) {
      out[i * 4] = Math.round(sums[i * 5]! / alpha);
      out[i * 4 + 1] = Math.round(sums[i * 5 + 1]! / alpha);
      out[i * 4 + 2] = Math.round(sums[i * 5 + 2]! / alpha);
    }
    out[i * 4 + 3] = count > 0 ? Math.round(alpha / count) : 0;
  }
  return out;
}

/** An 8-bit RGBA PNG, not interlaced, every row with filter 0. */
function encode(rgba: Uint8Array, width: number, height: number): Uint8Array {
  const raw = Buffer.alloc(height * (1 + width * 4));
  for (let y = 0; y < height; y++) {
    Buffer.from(rgba.buffer, rgba.byteOffset + y * width * 4, width * 4).copy(raw, y * (1 + width * 4) + 1);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk("IHDR", header),
    pngChunk("IDAT", deflateSync(raw)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}
