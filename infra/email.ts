import { emailSettings, fromAddressPattern } from "./email-settings";
import { functionBase, isProduction } from "./runtime";
import { table } from "./storage";

/**
 * The SES sender every invoice, estimate and reminder email comes from, and where SES reports what
 * became of them (docs/deploying.md, "Email"). The sender is the deployer's, not the code's: it comes
 * from the deploying shell or `.env.<stage>` (infra/email-settings.ts).
 */
const settings = emailSettings($app.stage, process.env);

/**
 * The stage's own configuration set, named on every SendEmail: SES reports bounces and complaints
 * to the configuration set the message was sent with, so each stage hears about its own emails even
 * when it shares another stage's identity (whose default set belongs to that stage).
 */
const production = isProduction($app.stage);
const configurationSet = new aws.sesv2.ConfigurationSet(
  "EmailConfigurationSet",
  { configurationSetName: `${$app.name}-${$app.stage}-email` },
  { retainOnDelete: production },
);

/**
 * Bounces, complaints and rejections go to an SNS topic, and from there to a small function that
 * marks the outbox record and the recipient (packages/core/src/email/bounces.ts). Deliveries are
 * not reported: only what needs the user's attention.
 */
const emailFeedback = new sst.aws.SnsTopic("EmailFeedback");
new aws.sesv2.ConfigurationSetEventDestination("EmailFeedbackDestination", {
  configurationSetName: configurationSet.configurationSetName,
  eventDestinationName: "feedback",
  eventDestination: {
    enabled: true,
    matchingEventTypes: ["BOUNCE", "COMPLAINT", "REJECT"],
    snsDestination: { topicArn: emailFeedback.arn },
  },
});
/**
 * Who may publish to the topic: SES, for this account's configuration set only. Without it SES
 * cannot deliver the feedback at all (the topic's default policy admits the account's own principals,
 * not the SES service), and scoped so no other account's SES, and no other set, can feed it.
 */
new aws.sns.TopicPolicy("EmailFeedbackPolicy", {
  arn: emailFeedback.arn,
  policy: configurationSet.arn.apply((setArn) =>
    emailFeedback.arn.apply((topicArn) => JSON.stringify(sesPublishPolicy(topicArn, setArn))),
  ),
});
/**
 * Where the feedback function's failures go. SNS invokes it asynchronously: Lambda retries a failed
 * notice twice, then, without a destination, drops it (a bounce never marked, the address emailed
 * again). The on-failure destination keeps the whole invocation (the SNS event, the error) 14 days;
 * an alarm fires when it is not empty (infra/alarms.ts) and
 * `npm run jobs -- replay-email-feedback-failures` runs the handler on it again (docs/operations.md).
 */
export const feedbackFailures = new sst.aws.Queue("EmailFeedbackFailures", {
  transform: { queue: { messageRetentionSeconds: 14 * 86_400 } },
});
const feedbackSubscriber = emailFeedback.subscribe("EmailFeedbackHandler", {
  ...functionBase("EmailFeedback", "30 seconds"),
  handler: "packages/functions/src/lambda/email-feedback.handler",
  memory: "256 MB",
  link: [table],
  // Lambda sends to the destination with the function's own role.
  permissions: [{ actions: ["sqs:SendMessage"], resources: [feedbackFailures.arn] }],
});
new aws.lambda.FunctionEventInvokeConfig("EmailFeedbackOnFailure", {
  functionName: feedbackSubscriber.apply((subscriber) => subscriber.nodes.function.name),
  maximumRetryAttempts: 2,
  destinationConfig: { onFailure: { destination: feedbackFailures.arn } },
});

/**
 * What linking the Email grants, replacing SST's default (`ses:*` on the identity and its set, and
 * SendEmail on `*`): SendEmail only, only From the sender (the `ses:FromAddress` condition), only with
 * this stage's configuration set. The resources name every identity of this account and region because
 * SES, while the account is in its sandbox, also authorizes the send against each (verified)
 * recipient's identity; the condition still limits the From address to ours.
 */
function sendingLink(identityArn: $util.Output<string>) {
  return {
    properties: { sender: settings.sender, configSet: configurationSet.configurationSetName },
    include: [
      sst.aws.permission({
        actions: ["ses:SendEmail", "ses:SendRawEmail"],
        resources: [identityArn.apply((arn) => arn.replace(/:identity\/.*$/, ":identity/*")), configurationSet.arn],
        conditions: [{ test: "StringLike", variable: "ses:FromAddress", values: [fromAddressPattern(settings)] }],
      }),
    ],
  };
}
sst.Linkable.wrap(sst.aws.Email, (identity) => sendingLink(identity.nodes.identity.arn));

/**
 * The identity: created by the stage that owns it; a stage sharing it (EMAIL_IDENTITY=shared) only
 * references it, so SES never sees a second CreateEmailIdentity (AlreadyExistsException) and removing
 * that stage leaves the identity alone.
 *
 * A domain whose DNS is not on Route 53 (EMAIL_DNS=manual) is not SST's Email: that component always
 * waits for the domain to verify (ses.DomainIdentityVerification, up to its timeout) before the
 * deploy can finish, and verification needs the DKIM records that only a finished deploy prints. So
 * the identity is created directly, without waiting: the deploy finishes at once and prints the
 * records (`emailDnsRecords`, and `emailDkimTokens`); mail flows once they resolve. It links as
 * `Email` all the same, with the same properties and the same narrow permission.
 *
 * Production keeps its identity if it leaves this file (`retainOnDelete`): its verification and DKIM
 * records are what lets mail from the domain arrive.
 */
const manualDomain = settings.isDomain && settings.dns === "manual" && settings.identity === "own";
const manualIdentity = manualDomain
  ? new aws.sesv2.EmailIdentity(
      "EmailIdentity",
      { emailIdentity: settings.sender, configurationSetName: configurationSet.configurationSetName },
      { retainOnDelete: production },
    )
  : undefined;

export const email = manualIdentity
  ? new sst.Linkable("Email", sendingLink(manualIdentity.arn))
  : settings.identity === "shared"
    ? sst.aws.Email.get("Email", settings.sender)
    : new sst.aws.Email("Email", { sender: settings.sender }, { retainOnDelete: production });

/**
 * The DNS records to add by hand when the domain's DNS is not on Route 53: DKIM (three CNAMEs, which
 * also verify the domain) and DMARC, as SST would have created them; and the bare DKIM tokens.
 * Undefined otherwise.
 */
export const emailDkimTokens = manualIdentity?.dkimSigningAttributes.apply((dkim) => dkim?.tokens ?? []);
export const emailDnsRecords = emailDkimTokens?.apply((tokens) => [
  ...tokens.map((token) => `CNAME ${token}._domainkey.${settings.sender} ${token}.dkim.amazonses.com`),
  `TXT _dmarc.${settings.sender} "v=DMARC1; p=none;"`,
]);

/** SES may publish the feedback of this account's configuration set, and nothing else may through this grant. */
function sesPublishPolicy(topicArn: string, configurationSetArn: string) {
  const account = configurationSetArn.split(":")[4];
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "SesPublishesFeedbackOfThisConfigurationSet",
        Effect: "Allow",
        Principal: { Service: "ses.amazonaws.com" },
        Action: "SNS:Publish",
        Resource: topicArn,
        Condition: { StringEquals: { "AWS:SourceAccount": account, "AWS:SourceArn": configurationSetArn } },
      },
    ],
  };
}
