import { execFile } from "node:child_process";
import { createCipheriv, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import type { InfraFunction } from "../../scripts/infra.mjs";

/**
 * Invoking built bundles like Lambda does (test/deploy/invoke-bundle.mjs, a separate Node process
 * whose working directory is the bundle's, as /var/task is on Lambda) with the links SST gives a
 * function, in either of the two forms `Resource` from "sst" reads:
 * - "environment": SST_RESOURCE_App and one SST_RESOURCE_<Name> JSON per linked resource (`sst dev`);
 * - "key-file": SST_RESOURCE_App, and the rest encrypted in resource.enc beside the handler with the
 *   key in SST_KEY (what a deployed function gets: .sst/platform/src/components/aws/function.ts).
 * Only what a Lambda would have is set (no TABLE_NAME), so a handler that finds its table has found
 * it through `Resource`.
 */
export type InvokeResult = { ok: true; value: unknown } | { ok: false; error: { name?: string; message?: string } };

const runner = fileURLToPath(new URL("./invoke-bundle.mjs", import.meta.url));

export async function invokeBundle(
  bundle: string,
  exportName: string,
  events: unknown[],
  env: Record<string, string>,
  files: Record<string, Buffer> = {},
): Promise<InvokeResult[]> {
  const dir = mkdtempSync(join(tmpdir(), "invoke-"));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dirname(bundle), name), content);
  try {
    const eventsFile = join(dir, "events.json");
    const resultsFile = join(dir, "results.json");
    writeFileSync(eventsFile, JSON.stringify(events));
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        [runner, bundle, exportName, eventsFile, resultsFile],
        { cwd: dirname(bundle), env: { PATH: process.env.PATH ?? "", ...env }, timeout: 120_000 },
        (error, _stdout, stderr) =>
          error ? reject(new Error(`${bundle} failed at init: ${stderr || error.message}`)) : resolve(),
      );
    });
    return JSON.parse(readFileSync(resultsFile, "utf8")) as InvokeResult[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface LinkedValues {
  tableName: string;
  emailSender: string;
  apiUrl: string;
  /** Secret values by name; a secret not named here has its placeholder "" (not configured). */
  secrets?: Record<string, string>;
  /** Where linked queues live (test/support/fake-sqs.ts); unset: a port nothing listens on. */
  sqsUrl?: string;
}

/** What SST puts in a linked resource's JSON, per component kind (their getSSTLink()). */
function linkedResource(kind: string, name: string, values: LinkedValues): Record<string, unknown> {
  switch (kind) {
    case "sst.aws.Dynamo":
      return { name: values.tableName, type: kind };
    case "sst.aws.Email":
      return { sender: values.emailSender, configSet: "invoicing-test-config", type: kind };
    case "sst.sst.Secret":
      return { value: values.secrets?.[name] ?? "", type: kind }; // "": the placeholder, not configured
    case "sst.aws.ApiGatewayV2":
      return { url: values.apiUrl, type: kind };
    case "sst.aws.Bus":
      return {
        name: "invoicing-dev-BusBus",
        arn: "arn:aws:events:us-east-1:123456789012:event-bus/invoicing-dev-BusBus",
        type: kind,
      };
    case "sst.sst.Linkable":
      // infra/secrets.ts CardPayments: on when the card processor's key is set.
      if (name === "CardPayments") return { enabled: Boolean(values.secrets?.StripeSecretKey), type: kind };
      throw new Error(`no test value for the linked ${name}: add one to test/deploy/lambda.ts`);
    case "sst.aws.Queue":
      return { url: `${values.sqsUrl ?? "http://127.0.0.1:9"}/123456789012/invoicing-dev-${name}Queue`, type: kind };
    case "sst.aws.SnsTopic":
      return { arn: `arn:aws:sns:us-east-1:123456789012:invoicing-dev-${name}`, type: kind };
    default:
      throw new Error(`no test value for a linked ${kind}: add one to test/deploy/lambda.ts`);
  }
}

export type LinkForm = "environment" | "key-file";

/** "25 seconds" / "2 minutes" → milliseconds (20 s when infra gives none). */
function timeoutMs(timeout: unknown): number {
  const match = /^(\d+) (second|minute)s?$/.exec(String(timeout ?? ""));
  if (!match) return 20_000;
  return Number(match[1]) * (match[2] === "minute" ? 60_000 : 1000);
}

/**
 * The environment (and files beside the handler) Lambda gives `fn`, region and credentials
 * included, pointed at DynamoDB Local.
 */
export function lambdaSetup(
  fn: InfraFunction,
  values: LinkedValues,
  dynamoEndpoint: string,
  form: LinkForm = "environment",
  taskRoot?: string,
): { env: Record<string, string>; files: Record<string, Buffer> } {
  const env: Record<string, string> = {
    // Where Lambda unpacks the zip (/var/task): the bundle's directory here.
    ...(taskRoot ? { LAMBDA_TASK_ROOT: taskRoot } : {}),
    AWS_REGION: "us-east-1",
    AWS_LAMBDA_FUNCTION_NAME: `invoicing-dev-${fn.id.replace(/\W+/g, "")}`,
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    DYNAMODB_ENDPOINT: dynamoEndpoint,
    SST_RESOURCE_App: JSON.stringify({ name: "invoicing", stage: "dev" }),
    // For the harness's context.getRemainingTimeInMillis (invoke-bundle.mjs), from infra's timeout.
    INVOKE_TIMEOUT_MS: String(timeoutMs(fn.timeout)),
  };
  const links = Object.fromEntries(
    fn.link.map((resource) => [resource.logicalName, linkedResource(resource.kind, resource.logicalName, values)]),
  );
  if (form === "environment") {
    for (const [name, resource] of Object.entries(links)) env[`SST_RESOURCE_${name}`] = JSON.stringify(resource);
    return { env, files: {} };
  }
  // AES-256-GCM, a zero nonce (the key is used once), the tag after the ciphertext: what
  // sst/resource decrypts.
  const key = randomBytes(32);
  const cipher = createCipheriv("aes-256-gcm", key, Buffer.alloc(12, 0));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(links)), cipher.final(), cipher.getAuthTag()]);
  env.SST_KEY = key.toString("base64");
  env.SST_KEY_FILE = "resource.enc";
  return { env, files: { "resource.enc": sealed } };
}

/**
 * An API Gateway HTTP API event in payload format 2.0, as AWS documents it ("Create AWS Lambda proxy
 * integrations for HTTP APIs", the 2.0 example; the `APIGatewayProxyEventV2` type of
 * @types/aws-lambda), as the `$default` route delivers it or, with `routeKey` (e.g.
 * "ANY /invoices/{id}/pdf"), as that route does: its route key and path parameters. Every field of
 * the documented example is made as API Gateway makes it:
 * - header names in lower case; a header sent several times is one, its values joined by commas;
 * - the Cookie header is not among the headers: its cookies are the `cookies` array, one per cookie;
 * - `queryStringParameters` (absent without a query) joins repeated parameters with commas, beside
 *   `rawQueryString` as sent;
 * - `pathParameters` and `stageVariables` only when there are some (AWS omits them otherwise);
 * - the body as a string, base64-encoded with `isBase64Encoded: true` when it is binary (an image,
 *   a PDF, application/octet-stream — or when `base64` says so), as API Gateway passes such bodies;
 * - requestContext: account, API id, domain name and prefix, http (method, path, protocol, source IP,
 *   user agent), request id, route key, stage `$default`, time in API Gateway's format and epoch ms.
 * `requestContext.authorizer` and `authentication` are left out, as AWS leaves them out for an API
 * without an authorizer or mutual TLS — which is this API (infra/api.ts): keys are checked by the app.
 */
export function httpApiEvent(
  method: string,
  path: string,
  options: {
    query?: string;
    headers?: Record<string, string | string[]>;
    body?: string | Uint8Array;
    base64?: boolean;
    routeKey?: string;
    stageVariables?: Record<string, string>;
  } = {},
): APIGatewayProxyEventV2 {
  const routeKey = options.routeKey ?? "$default";
  const pathParameters = routeKey === "$default" ? undefined : pathParametersOf(routeKey, path);
  const domainName = "abc123defg.execute-api.us-east-1.amazonaws.com";
  const query = options.query ?? "";
  const queryStringParameters: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(query)) {
    queryStringParameters[key] = key in queryStringParameters ? `${queryStringParameters[key]},${value}` : value;
  }
  const given: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    (given[name.toLowerCase()] ??= []).push(...(Array.isArray(value) ? value : [value]));
  }
  const cookies = (given.cookie ?? []).flatMap((header) => header.split(/;\s*/).filter(Boolean));
  delete given.cookie;
  const raw = options.body === undefined ? undefined : Buffer.from(options.body);
  const binary =
    options.base64 ?? /^(image\/|application\/(pdf|octet-stream|zip))/.test(given["content-type"]?.[0] ?? "");
  const body = raw === undefined ? undefined : binary ? raw.toString("base64") : raw.toString("utf8");
  const userAgent = given["user-agent"]?.join(",") ?? "bundle-test";
  const headers: Record<string, string> = {
    accept: "application/json",
    host: domainName,
    "user-agent": userAgent,
    "x-amzn-trace-id": "Root=1-67890abc-0123456789abcdef01234567",
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-port": "443",
    "x-forwarded-proto": "https",
    ...(raw === undefined ? {} : { "content-length": String(raw.byteLength) }),
    ...Object.fromEntries(Object.entries(given).map(([name, values]) => [name, values.join(",")])),
  };
  const now = new Date();
  return {
    version: "2.0",
    routeKey,
    rawPath: path,
    rawQueryString: query,
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(query ? { queryStringParameters } : {}),
    ...(pathParameters ? { pathParameters } : {}),
    ...(options.stageVariables ? { stageVariables: options.stageVariables } : {}),
    requestContext: {
      accountId: "123456789012",
      apiId: "abc123defg",
      domainName,
      domainPrefix: "abc123defg",
      http: { method, path, protocol: "HTTP/1.1", sourceIp: "203.0.113.7", userAgent },
      requestId: `req-${now.getTime()}`,
      routeKey,
      stage: "$default",
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: body !== undefined && binary,
  };
}

/** The values of a route's {variables} in a path: "ANY /invoices/{id}/pdf", "/invoices/7/pdf" → { id: "7" }. */
function pathParametersOf(routeKey: string, path: string): Record<string, string> {
  const template = routeKey.replace(/^\S+ /, "").split("/");
  const parts = path.split("/");
  if (template.length !== parts.length) throw new Error(`${path} does not match the route ${routeKey}`);
  const parameters: Record<string, string> = {};
  template.forEach((segment, i) => {
    const variable = /^\{(\w+)\}$/.exec(segment);
    if (variable) parameters[variable[1]!] = decodeURIComponent(parts[i]!);
    else if (segment !== parts[i]) throw new Error(`${path} does not match the route ${routeKey}`);
  });
  return parameters;
}

/** API Gateway's request time: "22/Nov/2026:09:30:00 +0000". */
function clfTime(date: Date): string {
  const [, day, month, year, time] = /^\w+, (\d+) (\w+) (\d+) ([\d:]+)/.exec(date.toUTCString())!;
  return `${day}/${month}/${year}:${time} +0000`;
}

/** The API's answer, its JSON body parsed. */
export function httpApiResponse(result: InvokeResult) {
  if (!result.ok) throw new Error(`the handler threw: ${result.error.name}: ${result.error.message}`);
  const response = result.value as APIGatewayProxyStructuredResultV2;
  const text = response.isBase64Encoded ? Buffer.from(response.body ?? "", "base64").toString() : (response.body ?? "");
  const headers = Object.fromEntries(
    Object.entries(response.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
  );
  let body: any; // JSON of any shape
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, headers, body, text };
}

/** An SNS notification event as Lambda receives it from a topic subscription, one record per message. */
export function snsEvent(topicArn: string, messages: unknown[]) {
  return {
    Records: messages.map((message, index) => ({
      EventSource: "aws:sns",
      EventVersion: "1.0",
      EventSubscriptionArn: `${topicArn}:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55`,
      Sns: {
        Type: "Notification",
        MessageId: `95df01b4-ee98-5cb9-9903-4c221d41eb5${index}`,
        TopicArn: topicArn,
        Subject: null,
        Message: JSON.stringify(message),
        Timestamp: new Date().toISOString(),
        SignatureVersion: "1",
        Signature: "EXAMPLE",
        SigningCertUrl: "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-example.pem",
        UnsubscribeUrl: `https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${topicArn}`,
        MessageAttributes: {},
      },
    })),
  };
}

/** An SES event-publishing bounce record (what SES puts in the SNS message), tags as SES reports them. */
export function sesBounceEvent(options: {
  recipient: string;
  tags: { Name: string; Value: string }[];
  type?: string;
  subType?: string;
}) {
  const at = new Date().toISOString();
  return {
    eventType: "Bounce",
    bounce: {
      feedbackId: "0100017f-example-bounce-feedback-000000",
      bounceType: options.type ?? "Permanent",
      bounceSubType: options.subType ?? "NoEmail",
      bouncedRecipients: [
        {
          emailAddress: options.recipient,
          action: "failed",
          status: "5.1.1",
          diagnosticCode: "smtp; 550 5.1.1 user unknown",
        },
      ],
      timestamp: at,
      reportingMTA: "dsn; a1-23.smtp-out.amazonses.com",
    },
    mail: {
      timestamp: at,
      source: "Billing <billing@example.com>",
      sourceArn: "arn:aws:ses:us-east-1:123456789012:identity/billing@example.com",
      sendingAccountId: "123456789012",
      messageId: "0100017f-example-message-id-000000",
      destination: [options.recipient],
      headersTruncated: false,
      tags: {
        "ses:configuration-set": ["invoicing-dev-email"],
        "ses:source-ip": ["192.0.2.10"],
        "ses:from-domain": ["example.com"],
        "ses:caller-identity": ["invoicing-dev-ApiFunctionRole"],
        ...Object.fromEntries(options.tags.map((tag) => [tag.Name, [tag.Value]])),
      },
    },
  };
}
