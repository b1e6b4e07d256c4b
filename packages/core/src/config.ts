/// <reference path="../../../sst-env.d.ts" />
import { Resource } from "sst";
import { QUEUE_NAMES, QUEUE_RESOURCES, type QueueName } from "./capabilities/queue-names";

/**
 * Deployed settings, resolved in one place: SST's linked `Resource` when deployed, plain environment
 * variables locally. `Resource` is the only correct reader of links: on Lambda SST passes them
 * encrypted in a file (SST_KEY_FILE), not as SST_RESOURCE_* variables (only App is one); under
 * `sst dev` and in tests they are SST_RESOURCE_<Name> JSON variables, which it reads too.
 */
export interface CoreConfig {
  tableName: string;
  /** Set locally (DynamoDB Local); unset on AWS. */
  dynamoEndpoint?: string;
  region: string;
  /** Base URL for links in emails (the public invoice page). */
  publicBaseUrl?: string;
  /** SES sender address or domain (deployed: the linked Email). */
  emailSender?: string;
  /** SES configuration set of the linked Email. */
  emailConfigSet?: string;
  /** Card processor (Stripe) keys; unset or empty means no card processor. */
  stripeSecretKey?: string;
  stripeWebhookSecret?: string;
  /**
   * Whether a card processor is configured: the linked CardPayments flag (functions that only need
   * to know, never holding the key), else whether the key itself is set (linked or STRIPE_SECRET_KEY).
   */
  cardPaymentsEnabled: boolean;
  /** The EventBridge bus every event is put on (deployed: the linked Bus). */
  eventBusName?: string;
  /** Another EventBridge endpoint (a local stand-in in tests); unset on AWS. */
  eventBridgeEndpoint?: string;
  /** The stream subscriber's failure queue (the stage's StreamFailures, under `sst shell`): for its replay. */
  streamFailuresQueueUrl?: string;
  /** The SES feedback function's on-failure queue (under `sst shell`), for its replay. */
  feedbackFailuresQueueUrl?: string;
  /** The work queues linked to this function (deployed: infra/queues.ts), by queue name: where it sends. */
  workQueueUrls: Partial<Record<QueueName, string>>;
  /** WEBHOOKS_ALLOW_PRIVATE=1: webhook URLs may be http and private (local development only). */
  webhooksAllowPrivate: boolean;
  /** PEPPOL_PROVIDER: the Peppol access point provider ("storecove"), unset: none, or deployed Storecove when its key is linked (docs/peppol.md). */
  peppolProvider?: string;
  /** Storecove's API key (STORECOVE_API_KEY; deployed: the linked secret StorecoveApiKey). */
  storecoveApiKey?: string;
}

/**
 * A resource linked to this function, or undefined when it is not (the local stack, or a function
 * infra deliberately does not link it to). `in` first: reading an unlinked name throws.
 */
function linked<K extends keyof Resource>(name: K): Resource[K] | undefined {
  return name in Resource ? Resource[name] : undefined;
}

/** The work queues this function may send to: those infra linked to it (capabilities/queue-names.ts). */
function linkedQueues(): Partial<Record<QueueName, string>> {
  const urls: Partial<Record<QueueName, string>> = {};
  for (const queue of QUEUE_NAMES) {
    const url = (linked(QUEUE_RESOURCES[queue] as keyof Resource) as { url?: string } | undefined)?.url;
    if (url) urls[queue] = url;
  }
  return urls;
}

/** Empty means unset: a secret left at its placeholder ("") is "not configured". */
const nonEmpty = (value: string | undefined): string | undefined => (value ? value : undefined);

/** A linked boolean: SST passes link properties through JSON, so it may arrive as "true"/"false". */
function flag(value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  return value === true || value === "true";
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): CoreConfig {
  const email = linked("Email");
  const stripeSecretKey = nonEmpty(linked("StripeSecretKey")?.value ?? env.STRIPE_SECRET_KEY);
  const linkedStorecoveKey = nonEmpty(linked("StorecoveApiKey")?.value);
  const storecoveApiKey = linkedStorecoveKey ?? nonEmpty(env.STORECOVE_API_KEY);
  return {
    tableName: linked("Table")?.name ?? env.TABLE_NAME ?? "invoicing",
    // Deployed, the linked StorecoveApiKey secret (infra/secrets.ts) is the provider: set, Storecove.
    peppolProvider: nonEmpty(env.PEPPOL_PROVIDER) ?? (linkedStorecoveKey ? "storecove" : undefined),
    storecoveApiKey,
    dynamoEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1",
    publicBaseUrl: nonEmpty(env.PUBLIC_BASE_URL) ?? nonEmpty(linked("PublicUrl")?.url?.replace(/\/+$/, "")),
    // Only the linked Email turns SES on: EMAIL_SENDER is infra's deploy-time input, and a developer
    // who deployed from this shell must still get the local .eml outbox from `npm start`.
    emailSender: email?.sender,
    emailConfigSet: email?.configSet,
    stripeSecretKey,
    stripeWebhookSecret: nonEmpty(linked("StripeWebhookSecret")?.value ?? env.STRIPE_WEBHOOK_SECRET),
    eventBusName: linked("Bus")?.name,
    eventBridgeEndpoint: env.EVENTBRIDGE_ENDPOINT || undefined,
    webhooksAllowPrivate: env.WEBHOOKS_ALLOW_PRIVATE === "1",
    streamFailuresQueueUrl: linked("StreamFailures")?.url,
    feedbackFailuresQueueUrl: linked("EmailFeedbackFailures")?.url,
    workQueueUrls: linkedQueues(),
    cardPaymentsEnabled: flag(linked("CardPayments")?.enabled) ?? stripeSecretKey !== undefined,
  };
}
