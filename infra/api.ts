import { withAccessLogFormat } from "./access-log";
import { isProduction, lambdaRuntime } from "./runtime";
import { stripeSecretKey, stripeWebhookSecret } from "./secrets";
import { table } from "./storage";

/**
 * The HTTP API: one `$default` route to the Hono app, which does its own routing, 404 and 405
 * (API.md), so API Gateway never answers for it.
 *
 * CORS: callers authenticate with a bearer API key, not cookies, so any origin may call; the
 * headers the contract reads and sets are allowed and exposed. Access logs are kept a month
 * (a year in production), in a format without the raw path (infra/access-log.ts).
 */
export const api = new sst.aws.ApiGatewayV2("Api", {
  cors: {
    allowOrigins: ["*"],
    allowMethods: ["*"],
    allowHeaders: ["authorization", "content-type", "idempotency-key", "if-match", "x-request-id"],
    exposeHeaders: ["etag", "location", "link", "idempotent-replayed", "x-request-id", "allow", "retry-after"],
    maxAge: "1 day",
  },
  accessLog: { retention: isProduction($app.stage) ? "1 year" : "1 month" },
  transform: { stage: withAccessLogFormat },
});

/**
 * The API function links what requests use: the table, the card processor's key (payment links)
 * and webhook secret (signature check), and the API itself (its URL is the base of the public
 * links in emails). No email sender: a request only queues an email in the outbox; the stream
 * subscriber (infra/stream.ts) delivers it. Links grant `dynamodb:*` on this table only. API Gateway
 * gives up after 30 s, so the function stops first.
 */
api.route("$default", {
  handler: "packages/functions/src/api.handler",
  ...lambdaRuntime,
  timeout: "25 seconds",
  memory: "1024 MB",
  link: [table, stripeSecretKey, stripeWebhookSecret, api],
  // /docs inlines Swagger UI's browser bundle, read from the package at the first request
  // (packages/functions/src/openapi/renderer.ts), so it is copied next to the code, not bundled.
  copyFiles: [
    { from: "node_modules/swagger-ui-dist/swagger-ui-bundle.js", to: "swagger-ui-dist/swagger-ui-bundle.js" },
    { from: "node_modules/swagger-ui-dist/swagger-ui.css", to: "swagger-ui-dist/swagger-ui.css" },
  ],
});

/**
 * The PDFs have their own function: pdf-lib is the heaviest dependency and only these two paths use
 * it, so the API function's bundle (and every cold start of it) stays without it. ANY: the PDF
 * app answers 405 for other methods itself, as the API would. It reads the table and, for the
 * pay link printed on the PDF, the API's URL.
 */
const pdfFunction = {
  handler: "packages/functions/src/pdf-api.handler",
  ...lambdaRuntime,
  timeout: "25 seconds" as const,
  memory: "1024 MB" as const,
  link: [table, api],
};
api.route("ANY /invoices/{id}/pdf", pdfFunction);
api.route("ANY /public/invoices/{token}/pdf", pdfFunction);
// E-invoices: Factur-X is the invoice PDF with its XML attached, so they are documents too.
api.route("ANY /invoices/{id}/e-invoice", pdfFunction);
api.route("ANY /public/invoices/{token}/e-invoice", pdfFunction);
