/**
 * The HTML part of every email: one layout that renders in common mail clients — tables for
 * layout, inline styles only, no external images, fonts or stylesheets. Every value is escaped
 * here: names and notes come from users.
 */
export interface EmailLayout {
  /** Shown by some clients next to the subject; hidden in the body. */
  preheader: string;
  /** The business sending it (the header line). */
  sender: string | null;
  heading: string;
  paragraphs: string[];
  /** Label/value rows of the summary table (number, amount, due date). */
  summary: { label: string; value: string; strong?: boolean }[];
  button?: { href: string; label: string };
  /** Short lines under the button (the attachment, the link as text). */
  after: string[];
  signature: string;
  footer: string | null;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const FONT = "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;";
const multiline = (text: string): string => escapeHtml(text).replace(/\r?\n/g, "<br>");

export function renderEmailHtml(e: EmailLayout): string {
  const rows = e.summary
    .map(
      (r) =>
        `<tr><td style="${FONT}padding:6px 0;color:#60606b;font-size:14px;">${escapeHtml(r.label)}</td>` +
        `<td align="right" style="${FONT}padding:6px 0;color:#1c1c21;font-size:${r.strong ? "16px;font-weight:700" : "14px"};">${escapeHtml(r.value)}</td></tr>`,
    )
    .join("");
  const button = e.button
    ? `<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="margin:24px 0 8px;"><tr>` +
      `<td bgcolor="#2453d6" style="border-radius:6px;"><a href="${escapeHtml(e.button.href)}" ` +
      `style="${FONT}display:inline-block;padding:12px 26px;color:#ffffff;font-size:15px;font-weight:600;text-decoration:none;border-radius:6px;">` +
      `${escapeHtml(e.button.label)}</a></td></tr></table>`
    : "";
  const p = (text: string, style = "") =>
    `<p style="${FONT}margin:0 0 14px;color:#1c1c21;font-size:15px;line-height:22px;${style}">${multiline(text)}</p>`;
  return [
    "<!DOCTYPE html>",
    `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${escapeHtml(e.heading)}</title></head>`,
    `<body style="margin:0;padding:0;background-color:#eef0f4;">`,
    `<div style="display:none;max-height:0;overflow:hidden;">${escapeHtml(e.preheader)}</div>`,
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" bgcolor="#eef0f4"><tr><td align="center" style="padding:24px 12px;">`,
    `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="max-width:560px;background-color:#ffffff;border-radius:8px;">`,
    `<tr><td style="padding:28px 32px 8px;">`,
    e.sender
      ? `<div style="${FONT}font-size:13px;font-weight:700;letter-spacing:.06em;text-transform:uppercase;color:#60606b;">${escapeHtml(e.sender)}</div>`
      : "",
    `<h1 style="${FONT}margin:10px 0 18px;font-size:22px;line-height:28px;color:#1c1c21;">${escapeHtml(e.heading)}</h1>`,
    ...e.paragraphs.map((t) => p(t)),
    rows
      ? `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="border-top:1px solid #e3e3e8;border-bottom:1px solid #e3e3e8;margin:8px 0;">${rows}</table>`
      : "",
    button,
    ...e.after.map((t) => p(t, "font-size:13px;color:#60606b;word-break:break-all;")),
    p(e.signature, "margin-top:20px;"),
    `</td></tr>`,
    e.footer
      ? `<tr><td style="${FONT}padding:16px 32px 24px;border-top:1px solid #e3e3e8;color:#8a8a94;font-size:12px;line-height:18px;">${multiline(e.footer)}</td></tr>`
      : `<tr><td style="padding:0 0 16px;"></td></tr>`,
    `</table></td></tr></table></body></html>`,
  ].join("\n");
}
