import { EMBEDDED_FONT_FILES, EMBEDDED_FONT_PACKAGE } from "../packages/functions/src/pdf/font-files";
import { functionPaths } from "./route-paths";
import { functionBase, installedBeside, isProduction, logRetention } from "./runtime";
import { cardPayments, stripeSecretKey, stripeWebhookSecret } from "./secrets";
import { table } from "./storage";
import { apiStage, routesDeclared } from "./stage";

/**
 * The HTTP API: one `$default` route to the Hono app, which does its own routing, 404 and 405
 * (API.md), so API Gateway never answers for it.
 *
 * CORS: callers authenticate with a bearer API key, not cookies, so any origin may call; the
 * headers the contract reads and sets are allowed and exposed. Access logs are kept as long as the
 * functions' logs (infra/runtime.ts), in a format without the raw path (infra/access-log.ts). Public
 * routes are throttled (infra/stage.ts, publicThrottling).
 *
 * Production retains the API (its stage, routes, log group and the $default route's function) even
 * if it leaves this file: its URL is in every email already sent and in the card processor's
 * webhook, so a new one would break both.
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
    transform: { stage: apiStage },
  },
  { retainOnDelete: isProduction($app.stage) },
);

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
 * SDK, the stream subscriber expires the sessions of voided and paid invoices) and the API itself
 * (its URL is the base of the public links in emails).
 * No email sender: a request only queues an email in the outbox; the stream subscriber
 * (infra/stream.ts) delivers it. The table's link grants item-level actions on this table only
 * (infra/storage.ts).
 */
const defaultRoute = api.route("$default", {
  ...functionBase("Api", "25 seconds"),
  handler: "packages/functions/src/lambda/api.handler",
  memory: "1024 MB",
  link: [table, cardPayments, api],
});

/**
 * Every path the documents and payments functions serve, read from their route modules
 * (packages/functions/src/app/route-paths.ts): each is routed to its function below.
 */
const paths = functionPaths();

/**
 * Every documents path, private and public, and the API's description (/openapi.json, /docs):
 * packages/functions/src/app/documents-routes.ts serves them.
 */
const DOCUMENT_PATHS = paths.documents;

/** Reads the table; the API's URL is printed on documents (the pay link). */
const documents = new sst.aws.Function("Documents", {
  ...functionBase("Documents", "25 seconds"),
  handler: "packages/functions/src/lambda/documents.handler",
  memory: "1024 MB",
  link: [table, api],
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
 * function alone has it), records payments in the table; the API's URL is where checkout returns.
 */
const payments = new sst.aws.Function("Payments", {
  ...functionBase("Payments", "25 seconds"),
  handler: "packages/functions/src/lambda/payments.handler",
  memory: "1024 MB",
  link: [table, stripeSecretKey, stripeWebhookSecret, api],
});
const paymentRoutes = PAYMENT_PATHS.map((path) => api.route(`ANY ${path}`, payments.arn));
routesDeclared(
  ["$default", ...[...DOCUMENT_PATHS, ...PAYMENT_PATHS].map((path) => `ANY ${path}`)],
  [defaultRoute, ...documentRoutes, ...paymentRoutes].filter((route) => route !== undefined),
);
