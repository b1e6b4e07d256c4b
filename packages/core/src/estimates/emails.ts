import { displayDate, displayMoney } from "../documents/display";
import { publicEstimateUrl } from "../documents/links";
import type { OutgoingEmail } from "../email/outbox";
import { fromSeller, type LinkDeps, parts, signature } from "../email/templates";
import type { PublicEstimate } from "./view";

/** An estimate, on its send: what was quoted, until when, and the link to its public page. */
export function estimateEmail(
  deps: LinkDeps,
  estimate: Omit<PublicEstimate, "taxBreakdown"> & { publicToken: string },
  to: string,
): OutgoingEmail {
  const number = estimate.estimateNumber ?? "";
  const total = displayMoney(estimate.total, estimate.currency);
  const validity = estimate.validUntil ? ` It is valid until ${displayDate(estimate.validUntil)}.` : "";
  const summary = [
    { label: "Estimate", value: number },
    { label: "Total", value: total, strong: true },
  ];
  if (estimate.validUntil) summary.splice(1, 0, { label: "Valid until", value: displayDate(estimate.validUntil) });
  return {
    to,
    subject: `Estimate ${number} for ${total}`,
    ...fromSeller(estimate.seller),
    ...parts({
      preheader: `Estimate ${number} for ${total}.${validity}`,
      sender: estimate.seller?.businessName ?? null,
      heading: `Estimate ${number}`,
      paragraphs: [`Hello ${estimate.clientName},`, `Here is estimate ${number} for ${total}.${validity}`],
      summary,
      button: { href: publicEstimateUrl(deps, estimate.publicToken), label: "View it here" },
      after: [],
      signature: signature(estimate.seller),
      footer: estimate.seller?.footer ?? null,
    }),
  };
}
