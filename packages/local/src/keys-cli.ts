import "./quiet-sdk";
import { parseArgs } from "node:util";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { KEY_SCOPES, type KeyScope } from "@invoicing/core/keys/resource";
import { parseTimestamp } from "@invoicing/core/time";
import { runCommandLine, userOfCommandLine } from "./stack";

/**
 * `npm run --silent keys -- create --user <userId> [--name N] [--scope full|read_only]
 * [--expires-at <time>]`: makes a user's API key and prints it as the last line. Reaches the
 * DynamoDB of a running `npm start` with the same DATA_DIR, or a deployed stage's under
 * `npx sst shell`.
 */
const USAGE =
  "usage: npm run --silent keys -- create --user <userId> [--name <name>] [--scope full|read_only] [--expires-at <RFC 3339 time or YYYY-MM-DD>]";

runCommandLine(async (open) => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      user: { type: "string" },
      name: { type: "string" },
      scope: { type: "string" },
      "expires-at": { type: "string" },
    },
  });
  const userId = userOfCommandLine(positionals[0] === "create", values.user, USAGE);
  if (!userId) return 2;
  const scope = (values.scope ?? "full") as KeyScope;
  if (!KEY_SCOPES.includes(scope)) {
    console.error(`--scope must be one of ${KEY_SCOPES.join(", ")}`);
    return 2;
  }
  const now = new Date();
  const given = values["expires-at"];
  const expiresAt = given === undefined ? null : parseTimestamp(given);
  if (given !== undefined && (expiresAt === null || !(Date.parse(expiresAt) > now.getTime()))) {
    console.error("--expires-at must be an RFC 3339 date-time or a date YYYY-MM-DD in the future");
    return 2;
  }
  const deps = await open();
  const created = await createApiKey(deps.db, userId, values.name ?? null, now, { scope, expiresAt });
  const limits = `${created.scope}${created.expiresAt ? `, expires ${created.expiresAt}` : ""}`;
  console.error(
    `created API key ${created.id} (${created.prefix}…, ${limits}) for user ${userId}; it is shown only once:`,
  );
  console.log(created.key);
  return 0;
});
