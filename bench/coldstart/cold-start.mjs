/**
 * One cold start as a user sees it, in this fresh Node process: import a Lambda bundle (init), call
 * its handler once with an API Gateway v2 event (the first routed response), exit.
 *   node cold-start.mjs <bundle.mjs|-> <event.json>
 * Prints the CPU ms (process.cpuUsage, user + system) from before the import to the response, and
 * the response's status. "-" imports nothing: the floor of starting Node and running this file.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, eventFile] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventFile, "utf8"));
const start = process.cpuUsage();
let status = 0;
if (bundle !== "-") {
  const { handler } = await import(pathToFileURL(bundle).href);
  const response = await handler(event, { awsRequestId: "cold-start", getRemainingTimeInMillis: () => 20_000 });
  status = response.statusCode;
}
const used = process.cpuUsage(start);
console.log(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, status }));
process.exit(0);
