import type { Deps } from "../deps";
import type { Seller } from "../profile/profile";
import { renderEmailHtml, type EmailLayout } from "./html";

/**
 * The emails' words, each as plain text and as HTML (one multipart/alternative). They come from
 * the business: its name is the From display name and the signature, replies go to its email. User
 * text (names, notes) is never interpreted: plain in the text part, escaped in the HTML part.
 * Subjects carry only what we generate (numbers, amounts, dates), never user text. Each document's
 * emails are with it (invoices/emails.ts, estimates/emails.ts, credit-notes/emails.ts); this is their
 * common frame.
 */
export type LinkDeps = Pick<Deps, "publicBaseUrl">;

const THANKS = "Thank you for your business.";

/** From the business (the document's seller): display name and reply address, when it has them. */
export const fromSeller = (seller: Seller | null | undefined) => ({
  fromName: seller?.businessName ?? seller?.legalName ?? null,
  replyTo: seller?.email ?? null,
});

/** The text part, from the same layout as the HTML part, so the two always say the same. */
function textOf(e: EmailLayout): string {
  const lines = [e.heading, "", ...e.paragraphs.flatMap((p) => [p, ""])];
  if (e.summary.length) lines.push(...e.summary.map((r) => `${r.label}: ${r.value}`), "");
  if (e.button) lines.push(`${e.button.label}:`, e.button.href, "");
  for (const a of e.after) lines.push(a, "");
  lines.push(e.signature, "");
  if (e.footer) lines.push("--", e.footer, "");
  return lines.join("\n");
}

export function parts(e: EmailLayout): { text: string; html: string } {
  return { text: textOf(e), html: renderEmailHtml(e) };
}

export const signature = (seller: Seller | null | undefined) =>
  `${THANKS}\n${seller?.businessName ?? seller?.legalName ?? ""}`.trim();
