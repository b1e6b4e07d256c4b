import { crc32, inflateSync } from "node:zlib";

/**
 * What a logo upload really is, read from its bytes (the Content-Type header only says what the
 * sender claims). A PNG must be a whole, well-formed file — signature, IHDR first, every chunk's
 * CRC right, image data that inflates, IEND last — and a JPEG a sequence of well-formed segments
 * with a frame header before its scan and an end marker. So a PNG signature on random bytes, or a
 * GIF renamed, is refused, and what is stored is something a PDF writer and a browser can draw.
 */
export type ImageType = "image/png" | "image/jpeg";

/** A stored image (the profile's logo) as documents draw it. */
export interface Logo {
  contentType: ImageType;
  bytes: Uint8Array;
  width: number;
  height: number;
}

export interface ImageInfo {
  type: ImageType;
  width: number;
  height: number;
}

export type ImageCheck = { ok: true; image: ImageInfo } | { ok: false; reason: string };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function inspectImage(bytes: Uint8Array, declared: ImageType): ImageCheck {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result = declared === "image/png" ? inspectPng(buf) : inspectJpeg(buf);
  return typeof result === "string" ? { ok: false, reason: result } : { ok: true, image: result };
}

function inspectPng(buf: Buffer): ImageInfo | string {
  if (buf.length < 8 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) return "is not a PNG image";
  let offset = 8;
  let header: { width: number; height: number; rowBytes: number } | undefined;
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
        color = body[9]!;
      const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[color];
      if (!channels || ![1, 2, 4, 8, 16].includes(depth) || width === 0 || height === 0)
        return "is a PNG image of an unknown kind";
      header = { width, height, rowBytes: Math.ceil((width * channels * depth) / 8) + 1 };
    } else if (type === "IDAT") {
      data.push(body);
    } else if (type === "IEND") {
      if (end !== buf.length) return "has data after the PNG image's end";
      break;
    }
    offset = end;
  }
  if (data.length === 0) return "is a PNG image without image data";
  if (header.width > 20_000 || header.height > 20_000) return "is too large a PNG image";
  try {
    // Bounded: an interlaced image is a little larger than its rows; a zip bomb stops here.
    inflateSync(Buffer.concat(data), { maxOutputLength: header.rowBytes * header.height * 2 + 1024 });
  } catch {
    return "is a damaged PNG image (its image data does not inflate)";
  }
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
