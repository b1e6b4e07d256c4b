import { crc32 } from "node:zlib";

/**
 * The PNG file format as the logo code reads and writes it (PNG spec, third edition): the chunks,
 * the header, the interlace passes. One reader for the logo check (image.ts, which refuses what is
 * not a whole, well-formed file) and the flattening (png-flatten.ts, which decodes what the check
 * accepted).
 */
export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface PngChunk {
  type: string;
  body: Buffer;
}

/**
 * The chunks of a PNG file, in order, read one at a time (a caller may stop at the first that does
 * not suit it), IEND the last: each within the file and with its CRC right, nothing after IEND. A
 * file that is not that ends with the reason, as a string worded to follow "the logo …".
 */
export function* readPngChunks(buf: Buffer): Generator<PngChunk | string> {
  if (buf.length < 8 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) return yield "is not a PNG image";
  for (let offset = 8; ; ) {
    if (offset + 12 > buf.length) return yield "is a truncated PNG image";
    const length = buf.readUInt32BE(offset);
    const type = buf.toString("latin1", offset + 4, offset + 8);
    const end = offset + 12 + length;
    if (end > buf.length) return yield "is a truncated PNG image";
    if (crc32(buf.subarray(offset + 4, offset + 8 + length)) !== buf.readUInt32BE(offset + 8 + length)) {
      return yield "is a damaged PNG image (a chunk's checksum is wrong)";
    }
    if (type === "IEND" && end !== buf.length) return yield "has data after the PNG image's end";
    yield { type, body: buf.subarray(offset + 8, offset + 8 + length) };
    if (type === "IEND") return;
    offset = end;
  }
}

/** One chunk written: length, type, body, CRC of type and body. */
export function pngChunk(type: string, body: Buffer): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  body.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}

/** Channels per pixel by colour type: grey, RGB, palette index, grey and alpha, RGBA. */
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

export interface PngHeader {
  width: number;
  height: number;
  /** Bits per sample: 1, 2, 4, 8 or 16. */
  depth: number;
  /** Colour type (CHANNELS' keys). */
  color: number;
  /** Undefined for a colour type PNG does not have. */
  channels: number | undefined;
  /** 0: none, 1: Adam7; anything else is not PNG. */
  interlace: number;
}

/** The IHDR chunk's fields (its body: 13 bytes). */
export function pngHeader(body: Buffer): PngHeader {
  const color = body[9]!;
  return {
    width: body.readUInt32BE(0),
    height: body.readUInt32BE(4),
    depth: body[8]!,
    color,
    channels: CHANNELS[color],
    interlace: body[12]!,
  };
}

/** Adam7's seven passes: first column and row, column and row steps. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

export interface PngPass {
  x0: number;
  y0: number;
  dx: number;
  dy: number;
  /** The pass's own size in pixels (never 0: empty passes have no rows at all and are left out). */
  width: number;
  height: number;
}

/**
 * The sub-images the image data holds, in order: one (the whole image) when not interlaced, else
 * Adam7's non-empty passes (PNG spec 8.2). Each of their rows is a filter byte and the packed pixels.
 */
export function pngPasses(width: number, height: number, interlaced: boolean): PngPass[] {
  const steps = interlaced ? ADAM7 : ([[0, 0, 1, 1]] as const);
  return steps
    .map(([x0, y0, dx, dy]) => ({
      x0,
      y0,
      dx,
      dy,
      width: Math.max(0, Math.ceil((width - x0) / dx)),
      height: Math.max(0, Math.ceil((height - y0) / dy)),
    }))
    .filter((pass) => pass.width > 0 && pass.height > 0);
}

/** Bytes of a row of `width` pixels, without its filter byte. */
export const pngStride = (width: number, bitsPerPixel: number): number => Math.ceil((width * bitsPerPixel) / 8);
