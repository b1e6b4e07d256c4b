import { crc32, inflateSync } from "node:zlib";
import type { ImageType } from "../capabilities/document-view";

// Where a stored image's type lives: with the document view that draws it (capabilities/ imports no domain).
export type { ImageType, Logo } from "../capabilities/document-view";

/**
 * What a logo upload really is, read from its bytes (the Content-Type header only says what the
 * sender claims). A PNG must be a whole, well-formed file — signature, IHDR first, every chunk's
 * CRC right, image data that inflates, IEND last — and a JPEG a sequence of well-formed segments
 * with a frame header before its scan and an end marker. So a PNG signature on random bytes, or a
 * GIF renamed, is refused, and what is stored is something a PDF writer and a browser can draw.
 *
 * Cost is bounded by the size allowed, not by what the file claims (issue 29, finding 1): a PNG is
 * refused by the size its header declares before anything is decompressed, its image data is
 * inflated only up to the exact number of bytes that size needs, and it must be exactly that many
 * (a 65-byte PNG declaring 2000 × 2000, or a zip bomb declaring 10 × 10, is refused). At most
 * 2000 × 2000 × 8 bytes (16-bit RGBA) plus row filter bytes: 32 MB, inflated once.
 */

interface ImageInfo {
  type: ImageType;
  width: number;
  height: number;
}

type ImageCheck = { ok: true; image: ImageInfo } | { ok: false; reason: string };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** `maxSide`: the most pixels either side may have; a larger image is refused by its header alone. */
export function inspectImage(bytes: Uint8Array, declared: ImageType, maxSide: number): ImageCheck {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result = declared === "image/png" ? inspectPng(buf, maxSide) : inspectJpeg(buf);
  if (typeof result === "string") return { ok: false, reason: result };
  if (result.width > maxSide || result.height > maxSide) return { ok: false, reason: tooLarge(result, maxSide) };
  return { ok: true, image: result };
}

const tooLarge = (size: { width: number; height: number }, maxSide: number) =>
  `is ${size.width} × ${size.height} pixels; at most ${maxSide} × ${maxSide}`;

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

/**
 * The exact length of a PNG's inflated image data: each row is a filter byte and its packed pixels;
 * an interlaced image is seven smaller images, empty passes having no rows at all (PNG spec 8.2).
 */
function imageDataLength(width: number, height: number, bitsPerPixel: number, interlaced: boolean): number {
  const rows = (w: number, h: number) => (w === 0 || h === 0 ? 0 : h * (1 + Math.ceil((w * bitsPerPixel) / 8)));
  if (!interlaced) return rows(width, height);
  let total = 0;
  for (const [x0, y0, dx, dy] of ADAM7) {
    total += rows(Math.max(0, Math.ceil((width - x0) / dx)), Math.max(0, Math.ceil((height - y0) / dy)));
  }
  return total;
}

function inspectPng(buf: Buffer, maxSide: number): ImageInfo | string {
  if (buf.length < 8 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) return "is not a PNG image";
  let offset = 8;
  let header: { width: number; height: number; dataLength: number } | undefined;
  const data: Buffer[] = [];
  for (;;) {
    if (offset + 12 > buf.length) return "is a truncated PNG image";
    const length = buf.readUInt32BE(offset);
    const type = buf.toString("latin1", offset + 4, offset + 8);
    const end = offset + 12 + length;
    if (end > buf.length) return "is a truncated PNG image";
    const body = buf.subarray(offset + 8, offset + 8 + length);
    if (crc32(buf.subarray(offset + 4, offset + 8 + length)) !== buf.readUInt32BE(offset + 8 + length)) {
      return "is a damaged PNG image (a chunk's checksum is wrong)";
    }
    if (!header) {
      if (type !== "IHDR" || length !== 13) return "is not a PNG image (no header chunk)";
      const width = body.readUInt32BE(0),
        height = body.readUInt32BE(4),
        depth = body[8]!,
        color = body[9]!,
        interlace = body[12]!;
      const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[color];
      if (!channels || ![1, 2, 4, 8, 16].includes(depth) || width === 0 || height === 0 || interlace > 1)
        return "is a PNG image of an unknown kind";
      // Refused by what it declares, before any of it is decompressed.
      if (width > maxSide || height > maxSide) return tooLarge({ width, height }, maxSide);
      header = { width, height, dataLength: imageDataLength(width, height, channels * depth, interlace === 1) };
    } else if (type === "IDAT") {
      data.push(body);
    } else if (type === "IEND") {
      if (end !== buf.length) return "has data after the PNG image's end";
      break;
    }
    offset = end;
  }
  if (data.length === 0) return "is a PNG image without image data";
  let pixels: Buffer;
  try {
    // Stops at the exact length its size needs: one byte more is an error, not more work.
    pixels = inflateSync(Buffer.concat(data), { maxOutputLength: header.dataLength });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE")
      return "is a damaged PNG image (more image data than its size holds)";
    return "is a damaged PNG image (its image data does not inflate)";
  }
  if (pixels.length !== header.dataLength) return "is a damaged PNG image (less image data than its size needs)";
  return { type: "image/png", width: header.width, height: header.height };
}

/** JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic): they carry the size. */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function inspectJpeg(buf: Buffer): ImageInfo | string {
  if (buf.length < 4 || buf[0] !== 0xff || buf[1] !== 0xd8) return "is not a JPEG image";
  if (buf[buf.length - 2] !== 0xff || buf[buf.length - 1] !== 0xd9) return "is a truncated JPEG image (no end marker)";
  let offset = 2;
  let size: { width: number; height: number } | undefined;
  while (offset + 4 <= buf.length) {
    if (buf[offset] !== 0xff) return "is a damaged JPEG image";
    const marker = buf[offset + 1]!;
    if (marker === 0xff) {
      offset++; // fill byte
      continue;
    }
    const length = buf.readUInt16BE(offset + 2);
    if (length < 2 || offset + 2 + length > buf.length) return "is a damaged JPEG image";
    if (SOF.has(marker)) {
      if (length < 8) return "is a damaged JPEG image";
      size = { height: buf.readUInt16BE(offset + 5), width: buf.readUInt16BE(offset + 7) };
      if (size.width === 0 || size.height === 0) return "is a JPEG image without a size";
    }
    if (marker === 0xda) {
      // Start of scan: entropy-coded data follows up to the end marker checked above.
      return size ? { type: "image/jpeg", ...size } : "is a JPEG image without a frame header";
    }
    offset += 2 + length;
  }
  return "is a JPEG image without image data";
}
