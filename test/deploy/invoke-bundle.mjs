/**
 * Runs one built Lambda bundle the way the Node.js runtime does, in its own process (plain Node:
 * no vitest transform, no test-process state): imports the .mjs (init), then calls its handler once
 * per event, in order, like a warm container.
 *   node invoke-bundle.mjs <bundle.mjs> <export> <events.json> <results.json>
 * Each result is { ok: true, value } or { ok: false, error: { name, message } }. An init failure
 * exits non-zero with the error on stderr.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, exportName, eventsFile, resultsFile] = process.argv.slice(2);
const events = JSON.parse(readFileSync(eventsFile, "utf8"));
const module = await import(pathToFileURL(bundle).href);
const handler = module[exportName];
if (typeof handler !== "function") throw new Error(`${bundle} exports no function "${exportName}"`);

// The function's timeout as infra declares it (lambda.ts passes it; the harness's, not the app's).
const timeoutMs = Number(process.env.INVOKE_TIMEOUT_MS || 20_000);
const results = [];
for (const [index, event] of events.entries()) {
  const started = Date.now();
  const context = {
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    awsRequestId: `request-${index}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
  };
  try {
    results.push({ ok: true, value: await handler(event, context) });
  } catch (error) {
    results.push({ ok: false, error: { name: error?.name, message: error?.message } });
  }
}
writeFileSync(resultsFile, JSON.stringify(results));
// Lambda freezes the container after the response; here the process ends (open SDK sockets included).
process.exit(0);
