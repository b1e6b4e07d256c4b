/**
 * A tiny XML writer for the e-invoices: elements with attributes and text, nothing else (no mixed
 * content, comments or processing instructions). Two rules make every document it writes safe:
 * - text and attribute values are escaped, and characters XML 1.0 cannot carry (control characters,
 *   lone surrogates, U+FFFE/U+FFFF) are dropped, so user text never breaks or injects markup;
 * - an element with no text and no non-empty child is left out entirely: the e-invoice rules forbid
 *   empty elements (PEPPOL-EN16931-R008), and an absent optional value then needs no special case.
 */
export interface XmlElement {
  readonly name: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
  readonly text: string | null;
}

/** Anything that may stand in a child list: absent values and nested lists are allowed. */
type XmlChild = XmlElement | null | undefined | false | "" | readonly XmlChild[];

type Attrs = Record<string, string | null | undefined>;

/** An element holding other elements; null when none of them is present. */
export function el(name: string, attrs: Attrs, ...children: XmlChild[]): XmlElement | null {
  const kept = flatten(children);
  if (kept.length === 0) return null;
  return { name, attrs: cleanAttrs(attrs), children: kept, text: null };
}

/** An element holding text; null when the text is absent or empty. */
export function leaf(name: string, text: string | null | undefined, attrs: Attrs = {}): XmlElement | null {
  if (text === null || text === undefined) return null;
  const clean = xmlSafe(text);
  if (clean.trim() === "") return null;
  return { name, attrs: cleanAttrs(attrs), children: [], text: clean };
}

/** The whole document: declaration, then the root element indented by two spaces per level. */
export function serialize(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  write(root, 0, out);
  return out.join("");
}

function write(node: XmlElement, depth: number, out: string[]): void {
  const pad = "  ".repeat(depth);
  const attrs = Object.entries(node.attrs)
    .map(([k, v]) => ` ${k}="${escapeAttr(v)}"`)
    .join("");
  if (node.text !== null) {
    out.push(`${pad}<${node.name}${attrs}>${escapeText(node.text)}</${node.name}>\n`);
    return;
  }
  out.push(`${pad}<${node.name}${attrs}>\n`);
  for (const child of node.children) write(child, depth + 1, out);
  out.push(`${pad}</${node.name}>\n`);
}

function flatten(children: readonly XmlChild[]): XmlElement[] {
  const out: XmlElement[] = [];
  for (const child of children) {
    if (!child) continue;
    if (Array.isArray(child)) out.push(...flatten(child));
    else out.push(child as XmlElement);
  }
  return out;
}

function cleanAttrs(attrs: Attrs): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) out[k] = xmlSafe(v);
  return out;
}

// Characters outside XML 1.0's Char production: C0 controls except tab, LF, CR; U+FFFE, U+FFFF;
// and UTF-16 surrogates that are not part of a pair (a pair is an astral character, e.g. an emoji).
const NOT_XML_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text with every character XML cannot carry removed. */
export const xmlSafe = (text: string): string => text.replace(NOT_XML_CHAR, "");

// A carriage return is written as a reference: a parser would turn a literal one into a line feed.
const escapeText = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\r/g, "&#13;");

// In attributes also quotes, and whitespace other than a space, which parsers would normalize away.
const escapeAttr = (s: string): string =>
  escapeText(s).replace(/"/g, "&quot;").replace(/\t/g, "&#9;").replace(/\n/g, "&#10;");
