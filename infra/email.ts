import { emailSettings, fromAddressPattern } from "./email-settings";
import { lambdaRuntime } from "./runtime";
import { table } from "./storage";

/**
 * The SES sender every invoice, estimate and reminder email comes from, and where SES reports what
 * became of them (docs/deploying.md, "Email"). The sender is the deployer's, not the code's: it comes
 * from the deploying shell or `.env.<stage>` (infra/email-settings.ts).
 */
const settings = emailSettings($app.stage, process.env);

/**
 * The identity: created by the stage that owns it; a stage sharing it (EMAIL_IDENTITY=shared) only
 * references it, so SES never sees a second CreateEmailIdentity (AlreadyExistsException) and removing
 * that stage leaves the identity alone. A domain whose DNS is not on Route 53 (EMAIL_DNS=manual) gets
 * no hosted-zone lookup; its records are printed as the `emailDnsRecords` output instead.
 */
export const email =
  settings.identity === "shared"
    ? sst.aws.Email.get("Email", settings.sender)
    : new sst.aws.Email("Email", {
        sender: settings.sender,
        ...(settings.dns === "manual" ? { dns: false as const } : {}),
      });

/**
 * The stage's own configuration set, named on every SendEmail: SES reports bounces and complaints
 * to the configuration set the message was sent with, so each stage hears about its own emails even
 * when it shares another stage's identity (whose default set belongs to that stage).
 */
const configurationSet = new aws.sesv2.ConfigurationSet("EmailConfigurationSet", {
  configurationSetName: `${$app.name}-${$app.stage}-email`,
});

/**
 * Bounces, complaints and rejections go to an SNS topic, and from there to a small function that
 * marks the outbox record and the recipient (packages/core/src/email/bounces.ts). Deliveries are
 * not reported: only what needs the user's attention.
 */
export const emailFeedback = new sst.aws.SnsTopic("EmailFeedback");
new aws.sesv2.ConfigurationSetEventDestination("EmailFeedbackDestination", {
  configurationSetName: configurationSet.configurationSetName,
  eventDestinationName: "feedback",
  eventDestination: {
    enabled: true,
    matchingEventTypes: ["BOUNCE", "COMPLAINT", "REJECT"],
    snsDestination: { topicArn: emailFeedback.arn },
  },
});
emailFeedback.subscribe("EmailFeedbackHandler", {
  handler: "packages/functions/src/lambda/email-feedback.handler",
  ...lambdaRuntime,
  timeout: "30 seconds",
  memory: "256 MB",
  link: [table],
});

/**
 * What linking the Email grants, replacing SST's default (`ses:*` on the identity and its set, and
 * SendEmail on `*`): SendEmail only, only From the sender (the `ses:FromAddress` condition), only with
 * this stage's configuration set. The resources name every identity of this account and region because
 * SES, while the account is in its sandbox, also authorizes the send against each (verified)
 * recipient's identity; the condition still limits the From address to ours.
 */
sst.Linkable.wrap(sst.aws.Email, (identity) => ({
  properties: { sender: identity.sender, configSet: configurationSet.configurationSetName },
  include: [
    sst.aws.permission({
      actions: ["ses:SendEmail", "ses:SendRawEmail"],
      resources: [
        identity.nodes.identity.arn.apply((arn) => arn.replace(/:identity\/.*$/, ":identity/*")),
        configurationSet.arn,
      ],
      conditions: [{ test: "StringLike", variable: "ses:FromAddress", values: [fromAddressPattern(settings)] }],
    }),
  ],
}));

/**
 * The DNS records to add by hand when the domain's DNS is not on Route 53: DKIM (three CNAMEs, which
 * also verify the domain) and DMARC, as SST would have created them. Empty otherwise.
 */
export const emailDnsRecords =
  settings.isDomain && settings.dns === "manual" && settings.identity === "own"
    ? email.nodes.identity.dkimSigningAttributes.apply((dkim) => [
        ...(dkim?.tokens ?? []).map(
          (token) => `CNAME ${token}._domainkey.${settings.sender} ${token}.dkim.amazonses.com`,
        ),
        `TXT _dmarc.${settings.sender} "v=DMARC1; p=none;"`,
      ])
    : undefined;
