import { inflateSync } from "node:zlib";
import type { ImageType } from "../capabilities/document-view";
import { pngHeader, pngPasses, pngStride, readPngChunks } from "./png";

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

/** The exact length of a PNG's inflated image data: each pass's rows, a filter byte and the packed pixels. */
function imageDataLength(width: number, height: number, bitsPerPixel: number, interlaced: boolean): number {
  let total = 0;
  for (const pass of pngPasses(width, height, interlaced))
    total += pass.height * (1 + pngStride(pass.width, bitsPerPixel));
  return total;
}

function inspectPng(buf: Buffer, maxSide: number): ImageInfo | string {
  let header: { width: number; height: number; dataLength: number } | undefined;
  const data: Buffer[] = [];
  for (const chunk of readPngChunks(buf)) {
    if (typeof chunk === "string") return chunk;
    const { type, body } = chunk;
    if (!header) {
      if (type !== "IHDR" || body.length !== 13) return "is not a PNG image (no header chunk)";
      const { width, height, depth, channels, interlace } = pngHeader(body);
      if (!channels || ![1, 2, 4, 8, 16].includes(depth) || width === 0 || height === 0 || interlace > 1)
        return "is a PNG image of an unknown kind";
      // Refused by what it declares, before any of it is decompressed.
      if (width > maxSide || height > maxSide) return tooLarge({ width, height }, maxSide);
      header = { width, height, dataLength: imageDataLength(width, height, channels * depth, interlace === 1) };
    } else if (type === "IDAT") {
      data.push(body);
    }
  }
  if (!header || data.length === 0) return "is a PNG image without image data";
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
