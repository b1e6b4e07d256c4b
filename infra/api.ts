import { execFileSync } from "node:child_process";
import { EMBEDDED_FONT_FILES, EMBEDDED_FONT_PACKAGE } from "../packages/functions/src/pdf/font-files";
import { functionBase, installedBeside, isProduction, logRetention } from "./runtime";
import { cardPayments, storecoveApiKey, stripeSecretKey, stripeWebhookSecret } from "./secrets";
import { table } from "./storage";
import { apiStage, routesDeclared } from "./stage";
import { stageSettings } from "./stages";

const settings = stageSettings($app.stage);
const production = isProduction($app.stage);

/**
 * The HTTP API: one `$default` route to the Hono app, which does its own routing, 404 and 405
 * (API.md), so API Gateway never answers for it.
 *
 * CORS: callers authenticate with a bearer API key, not cookies, so any origin may call; the
 * headers the contract reads and sets are allowed and exposed. Access logs are kept as long as the
 * functions' logs (infra/runtime.ts), in a format without the raw path (infra/access-log.ts). Public
 * routes are throttled (infra/stage.ts, publicThrottling).
 *
 * The stage's custom domain (infra/stages.ts, `domain`): on Route 53 SST makes the certificate, the
 * API Gateway domain, the mapping and the alias record; elsewhere the ACM certificate named by the
 * settings (validated by hand) is used and the deploy prints the target to point a CNAME at
 * (`apiDomainTarget`). Emailed links and the card processor's webhook name the domain, so they
 * outlive any re-creation of the API.
 *
 * Production retains the API and everything each route makes (the route, its integration, its
 * invoke permission, the $default route's function): `route.args` below marks every route
 * component, whose children inherit it (SST's Component). If the API ever left this file, the domain
 * would still answer.
 */
export const api = new sst.aws.ApiGatewayV2(
  "Api",
  {
    cors: {
      allowOrigins: ["*"],
      allowMethods: ["*"],
      allowHeaders: ["authorization", "content-type", "idempotency-key", "if-match", "x-request-id"],
      exposeHeaders: ["etag", "location", "link", "idempotent-replayed", "x-request-id", "allow", "retry-after"],
      maxAge: "1 day",
    },
    accessLog: { retention: logRetention($app.stage) },
    ...(settings.domain
      ? {
          domain: {
            name: settings.domain.name,
            ...(settings.domain.dns === "route53"
              ? { dns: sst.aws.dns() }
              : { dns: false as const, cert: settings.domain.dns.cert }),
          },
        }
      : {}),
    transform: {
      stage: apiStage,
      // Each api.route() is a component of its own, not a child of the API: retained explicitly.
      route: {
        args: (_args, opts) => {
          if (production) opts.retainOnDelete = true;
          return undefined;
        },
      },
    },
  },
  { retainOnDelete: production },
);

/**
 * The base of every public link (emailed pay links and public pages, checkout's return URL) and of
 * the card processor's webhook: `https://<domain>` as a constant when the stage has a domain, else
 * API Gateway's own URL (personal stages). A constant, not the API's `url` output: with a domain that
 * output comes from the API mapping, which waits for the stage, which waits for the routes
 * (infra/stage.ts), which wait for the functions linking it: a cycle.
 */
export const publicUrl = new sst.Linkable("PublicUrl", {
  properties: { url: settings.domain ? `https://${settings.domain.name}` : api.url },
});

/**
 * The app runs as three HTTP functions, each with only the dependencies its routes need, because the
 * API's cold start is the one users feel (npm run bench lists each bundle and its init):
 * - Api ($default): everything JSON.
 * - Documents: every path that renders a document (public pages, PDFs, e-invoices): Hono's JSX,
 *   pdf-lib and the e-invoice writer; and the API's description (/openapi.json, /docs): the OpenAPI
 *   builder and Swagger UI's files.
 * - Payments: the pay link, the card processor's webhook and card refunds: the Stripe SDK and its secrets.
 * Documents and Payments are one function each, routed from all their paths by ARN (a route given
 * function args would create one Lambda per route). ANY: each app answers 405 for other methods
 * itself, as the API would. All stop before API Gateway's 30 s.
 *
 * The API function links what its requests use: the table, whether card payments are on (the
 * CardPayments flag, never the key: `send` then stores the pay link; the function carries no Stripe
 * SDK, the stream subscriber expires the sessions of voided and paid invoices) and the public base
 * URL (of the public links in emails), and the Peppol provider's key (StorecoveApiKey: registration
 * and the send's receiver lookup call the provider; the hand-over itself is the PeppolWorker's).
 * No email sender: a request only queues an email in the outbox; the stream subscriber
 * (infra/stream.ts) delivers it. The table's link grants item-level actions on this table only
 * (infra/storage.ts).
 */
const defaultRoute = api.route("$default", {
  ...functionBase("Api", "25 seconds"),
  handler: "packages/functions/src/lambda/api.handler",
  memory: "1024 MB",
  link: [table, cardPayments, publicUrl, storecoveApiKey],
});

/**
 * Every path the documents and payments functions serve, read from their route modules
 * (packages/functions/src/app/function-paths.ts): each is routed to its function below, so a route
 * added to one of their modules is routed at the next deploy, with nothing else to edit. SST
 * evaluates infra in its own process, which cannot load the route modules (TypeScript, JSX): a
 * child Node with tsx imports that module and prints the paths as JSON.
 */
const paths: { documents: string[]; payments: string[] } = JSON.parse(
  execFileSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "--eval",
      'import { functionPaths } from "./packages/functions/src/app/function-paths.ts";' +
        "process.stdout.write(JSON.stringify(functionPaths()));",
    ],
    { encoding: "utf8", env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" } },
  ),
);

/**
 * Every documents path, private and public, and the API's description (/openapi.json, /docs):
 * packages/functions/src/app/documents-routes.ts serves them.
 */
const DOCUMENT_PATHS = paths.documents;

/** Reads the table; the public base URL is printed on documents (the pay link). */
const documents = new sst.aws.Function("Documents", {
  ...functionBase("Documents", "25 seconds"),
  handler: "packages/functions/src/lambda/documents.handler",
  memory: "1024 MB",
  link: [table, publicUrl],
  // The Factur-X PDF embeds its fonts (PDF/A): fontkit, which does it, is installed beside the
  // code rather than bundled (900 KiB that every cold start would parse, for a rare request), and
  // the fonts are read from disk at the first one (packages/functions/src/pdf/fonts.ts).
  ...installedBeside("@pdf-lib/fontkit"),
  copyFiles: [
    // /docs inlines Swagger UI's browser bundle, read from the package at the first request
    // (packages/functions/src/openapi/renderer.ts), so it is copied next to the code, not bundled.
    { from: "node_modules/swagger-ui-dist/swagger-ui-bundle.js", to: "swagger-ui-dist/swagger-ui-bundle.js" },
    { from: "node_modules/swagger-ui-dist/swagger-ui.css", to: "swagger-ui-dist/swagger-ui.css" },
    ...Object.values(EMBEDDED_FONT_FILES).map((file) => ({
      from: `node_modules/${EMBEDDED_FONT_PACKAGE}/${file}`,
      to: `${EMBEDDED_FONT_PACKAGE}/${file}`,
    })),
  ],
});
const documentRoutes = DOCUMENT_PATHS.map((path) => api.route(`ANY ${path}`, documents.arn));

/** The card processor's paths: the pay link, its webhook, refunds (packages/functions/src/app/payments-routes.ts). */
const PAYMENT_PATHS = paths.payments;

/**
 * Creates checkout sessions (the processor's key), verifies its webhooks (the webhook secret: this
 * function alone has it), records payments in the table; the public base URL is where checkout returns.
 */
const payments = new sst.aws.Function("Payments", {
  ...functionBase("Payments", "25 seconds"),
  handler: "packages/functions/src/lambda/payments.handler",
  memory: "1024 MB",
  link: [table, stripeSecretKey, stripeWebhookSecret, publicUrl],
});
const paymentRoutes = PAYMENT_PATHS.map((path) => api.route(`ANY ${path}`, payments.arn));
routesDeclared(
  ["$default", ...[...DOCUMENT_PATHS, ...PAYMENT_PATHS].map((path) => `ANY ${path}`)],
  [defaultRoute, ...documentRoutes, ...paymentRoutes].filter((route) => route !== undefined),
  settings.publicThrottling,
);

/** A domain whose DNS is elsewhere: the host its CNAME must point at (printed by the deploy). */
export const apiDomainTarget =
  settings.domain && settings.domain.dns !== "route53"
    ? api.nodes.domainName.domainNameConfiguration.targetDomainName
    : undefined;
