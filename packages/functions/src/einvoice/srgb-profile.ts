/**
 * An ICC colour profile for sRGB (IEC 61966-2-1), built from the standard's own numbers rather than
 * shipped as a file. PDF/A needs one as the document's output intent whenever the pages use device
 * colours (our PDFs draw in DeviceRGB): it says what those RGB values mean.
 *
 * A version 2 display profile ("mntr", RGB data, XYZ connection space) with the tags a matrix/TRC
 * profile requires: description, copyright, media white point, the three primaries adapted to the
 * D50 connection space (Bradford), and the sRGB tone curve as a 1024-entry table shared by the
 * three channels.
 */
const D50: XYZ = [0.9642, 1, 0.8249];
/** sRGB's red, green and blue primaries, chromatically adapted (Bradford) from D65 to D50. */
const PRIMARIES: Record<"r" | "g" | "b", XYZ> = {
  r: [0.4360747, 0.2225045, 0.0139322],
  g: [0.3850649, 0.7168786, 0.0971045],
  b: [0.1430804, 0.0606169, 0.7141733],
};
const CURVE_POINTS = 1024;
/** The creation date in the header (year, month, day, hours, minutes, seconds): fixed, so the bytes are. */
const CREATED = [2026, 1, 1, 0, 0, 0];
export const SRGB_PROFILE_NAME = "sRGB IEC61966-2.1";

type XYZ = [number, number, number];

/** The sRGB transfer function: encoded value (0…1) to linear light (0…1). */
const linear = (encoded: number): number => (encoded <= 0.04045 ? encoded / 12.92 : ((encoded + 0.055) / 1.055) ** 2.4);

class Writer {
  readonly bytes: number[] = [];
  u8(n: number): this {
    this.bytes.push(n & 0xff);
    return this;
  }
  u16(n: number): this {
    return this.u8(n >>> 8).u8(n);
  }
  u32(n: number): this {
    return this.u16(n >>> 16).u16(n & 0xffff);
  }
  ascii(text: string): this {
    for (const char of text) this.u8(char.charCodeAt(0));
    return this;
  }
  /** s15Fixed16Number: a signed fixed-point number with 16 fraction bits. */
  fixed(n: number): this {
    return this.u32(Math.round(n * 65536) >>> 0);
  }
  zeros(count: number): this {
    for (let i = 0; i < count; i++) this.u8(0);
    return this;
  }
}

function textDescription(text: string): number[] {
  const w = new Writer()
    .ascii("desc")
    .zeros(4)
    .u32(text.length + 1)
    .ascii(text)
    .u8(0);
  // No Unicode nor ScriptCode description: their counts are zero (the ScriptCode part has fixed size).
  return w.u32(0).u32(0).u16(0).u8(0).zeros(67).bytes;
}

const text = (value: string): number[] => new Writer().ascii("text").zeros(4).ascii(value).u8(0).bytes;
const xyz = ([x, y, z]: XYZ): number[] => new Writer().ascii("XYZ ").zeros(4).fixed(x).fixed(y).fixed(z).bytes;

function toneCurve(): number[] {
  const w = new Writer().ascii("curv").zeros(4).u32(CURVE_POINTS);
  for (let i = 0; i < CURVE_POINTS; i++) w.u16(Math.round(linear(i / (CURVE_POINTS - 1)) * 65535));
  return w.bytes;
}

/** The profile's bytes, the same every time. */
export function srgbProfile(): Uint8Array {
  const curve = toneCurve();
  const tags: [string, number[]][] = [
    ["desc", textDescription(SRGB_PROFILE_NAME)],
    ["cprt", text("No copyright, use freely")],
    ["wtpt", xyz(D50)],
    ["rXYZ", xyz(PRIMARIES.r)],
    ["gXYZ", xyz(PRIMARIES.g)],
    ["bXYZ", xyz(PRIMARIES.b)],
    ["rTRC", curve],
    ["gTRC", curve],
    ["bTRC", curve],
  ];
  // Tag data after the header (128 bytes) and the tag table, each element 4-byte aligned; the three
  // tone curves are one element that three table entries point at, as the format allows.
  const table = new Writer().u32(tags.length);
  const data = new Writer();
  const start = 128 + 4 + tags.length * 12;
  const placed = new Map<number[], number>();
  for (const [signature, element] of tags) {
    let offset = placed.get(element);
    if (offset === undefined) {
      offset = start + data.bytes.length;
      placed.set(element, offset);
      data.bytes.push(...element);
      while (data.bytes.length % 4) data.u8(0);
    }
    table.ascii(signature).u32(offset).u32(element.length);
  }
  const size = start + data.bytes.length;
  const header = new Writer()
    .u32(size)
    .zeros(4) // preferred CMM: none
    .u32(0x02100000) // version 2.1
    .ascii("mntr")
    .ascii("RGB ")
    .ascii("XYZ ");
  for (const part of CREATED) header.u16(part);
  header
    .ascii("acsp")
    .zeros(4 + 4 + 4 + 4 + 8) // platform, flags, manufacturer, model, attributes
    .u32(0) // rendering intent: perceptual
    .fixed(D50[0]) // the connection space's illuminant, X Y Z
    .fixed(D50[1])
    .fixed(D50[2])
    .zeros(4) // creator
    .zeros(44); // profile id (version 4 only) and reserved
  return Uint8Array.from([...header.bytes, ...table.bytes, ...data.bytes]);
}
