import type { SESv2Client, SendEmailCommandInput } from "@aws-sdk/client-sesv2";
import { envelope, formatAddressOneLine, renderEml } from "./eml";
import { feedbackTags } from "./bounces";
import type { DeliveryReceipt, EmailMessage, EmailSender, EmailTransport } from "../capabilities/email-transport";

/**
 * The deployed backend: Amazon SES (API v2) sends the message from the configured sender (the
 * address or domain of infra's `sst.aws.Email`, whose identity the function is allowed to send
 * from). The message goes as raw MIME — the very bytes the local .eml outbox writes (eml.ts):
 * text and HTML alternatives, the invoice PDF attached, the business's name on the From line;
 * our message id travels in an `X-Invoicing-Message-Id` header so a delivered email can be traced
 * back to its outbox record.
 */
interface SesSettings extends EmailSender {
  /** The linked Email's configuration set (bounce and complaint events). */
  configurationSet?: string;
}

export class SesTransport implements EmailTransport {
  readonly kind = "ses" as const;

  /** The SES client is made at the first delivery (see createSesClient). */
  constructor(
    private readonly client: () => Promise<SESv2Client>,
    readonly settings: SesSettings,
  ) {}

  /** The SendEmail request for a message: exposed so a test can check what would be sent. */
  commandInput(message: EmailMessage): SendEmailCommandInput {
    return {
      FromEmailAddress: formatAddressOneLine(envelope(message, this.settings).from),
      Destination: { ToAddresses: [message.to] },
      ConfigurationSetName: this.settings.configurationSet,
      // Lead a bounce or complaint back to the outbox record (email/bounces.ts).
      EmailTags: message.userId ? feedbackTags(message.userId, message.id) : undefined,
      Content: { Raw: { Data: Buffer.from(renderEml(message, this.settings), "utf8") } },
    };
  }

  async deliver(message: EmailMessage): Promise<DeliveryReceipt> {
    const { SendEmailCommand } = await loadSdk();
    const out = await (await this.client()).send(new SendEmailCommand(this.commandInput(message)));
    return { providerMessageId: out.MessageId };
  }
}

/**
 * The SES SDK is loaded at first use, not at import: the API Lambda's cold start should not pay
 * for evaluating it (npm run bench, "Lambda init").
 */
let sdk: Promise<typeof import("@aws-sdk/client-sesv2")> | undefined;
const loadSdk = () => (sdk ??= import("@aws-sdk/client-sesv2"));

/**
 * An SES client that gives up quickly: delivery right after a request runs within that request,
 * and a message SES did not take is retried by the outbox sweep, not by waiting here. Made once,
 * at the first call.
 */
export function createSesClient(region: string): () => Promise<SESv2Client> {
  let client: Promise<SESv2Client> | undefined;
  return () =>
    (client ??= loadSdk().then(
      ({ SESv2Client }) =>
        new SESv2Client({
          region,
          maxAttempts: 2,
          requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000 },
        }),
    ));
}
