import { randomBytes } from "node:crypto";
import type { EmailMessage, EmailSender } from "../capabilities/email-transport";

/**
 * RFC 5322 messages (with the MIME headers of RFC 2045–2047), the `.eml` format every mail client
 * opens and the raw message SES sends. Text and HTML bodies are UTF-8, quoted-printable, as a
 * multipart/alternative; attachments (the invoice PDF) are base64 parts of a multipart/mixed that
 * wraps it. Lines stay under 78 characters; header text outside printable ASCII becomes RFC 2047
 * encoded words. CR and LF never reach a header from the message's fields: no header injection.
 */
const CRLF = "\r\n";
const MAX_LINE = 76;

/** The From and Reply-To a message goes out with: the business's name on the service's address. */
export function envelope(message: EmailMessage, sender: EmailSender): { from: string; replyTo?: string } {
  const address = addressOf(sender.from);
  const from = message.fromName ? `${message.fromName} <${address}>` : sender.from;
  const replyTo = message.replyTo ?? sender.replyTo;
  return replyTo ? { from, replyTo } : { from };
}

export function renderEml(message: EmailMessage, sender: EmailSender): string {
  const { from, replyTo } = envelope(message, sender);
  const headers: [string, string][] = [
    ["From", formatAddress(from)],
    ["To", formatAddress(message.to)],
  ];
  if (replyTo) headers.push(["Reply-To", formatAddress(replyTo)]);
  headers.push(
    ["Subject", encodeHeaderText(message.subject)],
    ["Date", rfc5322Date(message.createdAt)],
    ["Message-ID", messageIdHeader(message.id, sender.from)],
    ["X-Invoicing-Message-Id", message.id],
    ["MIME-Version", "1.0"],
  );
  const head = headers.map(([name, value]) => fold(`${name}: ${value}`)).join(CRLF);
  return `${head}${CRLF}${body(message)}`;
}

/** The MIME body, starting with its own Content-Type header lines. */
function body(message: EmailMessage): string {
  const text = textPart("text/plain", message.text);
  const content = message.html ? multipart("alternative", [text, textPart("text/html", message.html)]) : text;
  const attachments = message.attachments ?? [];
  if (attachments.length === 0) return content;
  return multipart("mixed", [
    content,
    ...attachments.map((a) => {
      const name = a.filename.replace(/["\\\r\n]/g, "_");
      return [
        `Content-Type: ${a.contentType}; name="${name}"`,
        `Content-Disposition: attachment; filename="${name}"`,
        "Content-Transfer-Encoding: base64",
        "",
        base64Lines(a.content),
      ].join(CRLF);
    }),
  ]);
}

const textPart = (type: string, content: string): string =>
  [
    `Content-Type: ${type}; charset=utf-8`,
    "Content-Transfer-Encoding: quoted-printable",
    "",
    quotedPrintable(content),
  ].join(CRLF);

/** A multipart entity; its boundary is random, and no quoted-printable or base64 line can contain "--=_". */
function multipart(subtype: string, parts: string[]): string {
  const boundary = `=_${subtype[0]}${randomBytes(8).toString("hex")}`;
  return [
    `Content-Type: multipart/${subtype}; boundary="${boundary}"`,
    "",
    ...parts.map((part) => `--${boundary}${CRLF}${part}`),
    `--${boundary}--`,
    "",
  ].join(CRLF);
}

const base64Lines = (bytes: Uint8Array): string =>
  (
    Buffer.from(bytes)
      .toString("base64")
      .match(/.{1,76}/g) ?? []
  ).join(CRLF);

/** `Sun, 22 Nov 2026 09:30:00 +0000`. */
function rfc5322Date(iso: string): string {
  return new Date(iso).toUTCString().replace(/GMT$/, "+0000");
}

/** `<id@domain-of-the-sender>`: globally unique because the id is. */
function messageIdHeader(id: string, from: string): string {
  const domain = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from)?.[1] ?? "invoicing.local";
  return `<${id}@${domain}>`;
}

const oneLine = (text: string): string => text.replace(/[\r\n]+/g, " ");
const isPrintableAscii = (text: string): boolean => /^[\x20-\x7e]*$/.test(text);
const SIMPLE_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9.-]+$/;

/** The bare address of `Name <addr>` or `addr`. */
function addressOf(input: string): string {
  const match = /<([^<>]+)>\s*$/.exec(oneLine(input));
  return (match ? match[1]! : input).trim().replace(/[\r\n<>]/g, "");
}

/** `addr`, or `Display Name <addr>` (a name in quotes when it has specials, encoded when not ASCII). */
function formatAddress(input: string): string {
  const match = /^\s*(.*?)\s*<([^<>]+)>\s*$/.exec(oneLine(input));
  const address = (match ? match[2]! : input).trim().replace(/[\r\n<>]/g, "");
  const addr = SIMPLE_ADDRESS.test(address) ? address : `<${address}>`;
  const name = match?.[1]?.replace(/^"(.*)"$/, "$1");
  if (!name) return addr;
  const shownName = isPrintableAscii(name)
    ? /^[A-Za-z0-9 !#$%&'*+/=?^_`{|}~-]+$/.test(name)
      ? name
      : `"${name.replace(/(["\\])/g, "\\$1")}"`
    : encodedWords(name);
  return `${shownName} <${address}>`;
}

/**
 * An address for a field that is not a header line — SES's `FromEmailAddress` — as formatAddress
 * writes it, on one line: SES wants a display name with non-ASCII letters ("Müller GmbH") as RFC
 * 2047 encoded words, and took the raw name before (issue 29, finding 5). Adjacent encoded words
 * are joined by a space, which RFC 2047 ignores between them.
 */
export const formatAddressOneLine = (input: string): string => formatAddress(input).replaceAll(`${CRLF} `, " ");

/** Header text: kept as is when printable ASCII, else RFC 2047 `=?utf-8?B?…?=` words. */
function encodeHeaderText(text: string): string {
  const flat = oneLine(text);
  return isPrintableAscii(flat) ? flat : encodedWords(flat);
}

/** Base64 encoded words of at most 75 characters, never splitting a character between two. */
function encodedWords(text: string): string {
  const words: string[] = [];
  let chunk = "";
  for (const char of text) {
    if (Buffer.byteLength(chunk + char) > 45) {
      words.push(chunk);
      chunk = "";
    }
    chunk += char;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?utf-8?B?${Buffer.from(w, "utf8").toString("base64")}?=`).join(`${CRLF} `);
}

/** Folds a header line at spaces so lines stay near 78 characters (encoded words already folded). */
function fold(line: string): string {
  if (line.length <= 78 || line.includes(CRLF)) return line;
  const out: string[] = [];
  let current = "";
  for (const word of line.split(" ")) {
    if (current && current.length + 1 + word.length > 78) {
      out.push(current);
      current = word;
    } else {
      current = current ? `${current} ${word}` : word;
    }
  }
  out.push(current);
  return out.join(`${CRLF} `);
}

/**
 * Quoted-printable (RFC 2045 §6.7) of UTF-8 text: line breaks become CRLF, `=`, control and
 * non-ASCII bytes `=XX`, whitespace before a line break is encoded, and lines longer than 76
 * characters get soft breaks (`=` at the end) that never split an `=XX`.
 */
function quotedPrintable(text: string): string {
  return text.replace(/\r\n?/g, "\n").split("\n").map(encodeQpLine).join(CRLF);
}

function encodeQpLine(line: string): string {
  const tokens: string[] = [];
  for (const byte of Buffer.from(line, "utf8")) {
    const literal = (byte >= 33 && byte <= 126 && byte !== 61) || byte === 32 || byte === 9;
    tokens.push(literal ? String.fromCharCode(byte) : `=${byte.toString(16).toUpperCase().padStart(2, "0")}`);
  }
  const last = tokens.length - 1;
  if (last >= 0 && (tokens[last] === " " || tokens[last] === "\t")) {
    tokens[last] = tokens[last] === " " ? "=20" : "=09";
  }
  const lines: string[] = [];
  let current = "";
  for (const token of tokens) {
    if (current.length + token.length > MAX_LINE - 1) {
      lines.push(`${current}=`);
      current = "";
    }
    current += token;
  }
  lines.push(current);
  return lines.join(CRLF);
}
