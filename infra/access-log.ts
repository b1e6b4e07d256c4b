/**
 * The API's access-log line. SST's default format logs `$context.path`, and a public page's path
 * holds its token (/public/invoices/{token}): whoever reads the logs could open every invoice viewed
 * in the last year. This format logs the route key instead (`$default`, or the route's template such
 * as `ANY /public/invoices/{token}/pdf`, never the value), with what an operator needs to follow a
 * request: API Gateway's id, time, method, status and latencies, and the integration's request id,
 * which for a Lambda integration is the invocation's id: the app logs it on every line of that
 * request as `awsRequestId` (packages/functions/src/http/middleware.ts), so an access-log line
 * joins its function's log lines (docs/operations.md, "Logs and metrics"). No caller IP or user
 * agent either: personal data the service has no use for.
 */
export const accessLogFormat: Record<string, string> = {
  requestId: `"$context.requestId"`,
  requestTime: `"$context.requestTime"`,
  httpMethod: `"$context.httpMethod"`,
  routeKey: `"$context.routeKey"`,
  status: `$context.status`, // a number: not quoted
  responseLatency: `$context.responseLatency`,
  integrationRequestId: `"$context.integration.requestId"`,
  integrationStatus: `"$context.integration.status"`,
  integrationLatency: `"$context.integration.latency"`,
  integrationError: `"$context.integrationErrorMessage"`,
};

interface StageArgsWithAccessLog {
  accessLogSettings?: unknown;
}

/**
 * `transform.stage` of the ApiGatewayV2: keeps the log group SST made and replaces only the format.
 * SST passes the settings as a plain object; if that ever changes the deploy stops here rather than
 * silently keeping the default format (which logs tokens).
 */
export function withAccessLogFormat(args: StageArgsWithAccessLog): undefined {
  const settings = args.accessLogSettings;
  if (!settings || typeof settings !== "object" || !("destinationArn" in settings) || !("format" in settings)) {
    throw new Error("infra/access-log.ts: SST's stage has no plain accessLogSettings object to set the format on");
  }
  (settings as { format: unknown }).format = JSON.stringify(accessLogFormat);
  return undefined;
}
