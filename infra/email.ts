/**
 * The SES sender every invoice, estimate and reminder email comes from. An address (SES emails it a
 * verification link) or a domain you own (SST adds the DNS records when Route 53 hosts it). It is
 * the deployer's, not the code's, so it comes from the deploying shell: see docs/deploying.md.
 */
const sender = process.env.EMAIL_SENDER;
if (!sender) {
  throw new Error("Set EMAIL_SENDER to the address or domain invoices are sent from, e.g. EMAIL_SENDER=billing@example.com npx sst deploy");
}

export const email = new sst.aws.Email("Email", { sender });
