import "./quiet-sdk";
import { parseArgs } from "node:util";
import { createApiKey, USER_ID_SHAPE } from "@invoicing/core/keys/api-keys";
import { runCommandLine } from "./stack";

/**
 * `npm run --silent keys -- create --user <userId> [--name N]`: makes a user's API key and prints
 * it as the last line. Reaches the DynamoDB of a running `npm start` with the same DATA_DIR, or a
 * deployed stage's under `npx sst shell`.
 */
const USAGE = "usage: npm run --silent keys -- create --user <userId> [--name <name>]";

runCommandLine(async (open) => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { user: { type: "string" }, name: { type: "string" } },
  });
  if (positionals[0] !== "create" || !values.user) {
    console.error(USAGE);
    return 2;
  }
  if (!USER_ID_SHAPE.test(values.user)) {
    console.error("userId must be 1-64 characters of A-Z a-z 0-9 _ -");
    return 2;
  }
  const deps = await open();
  const created = await createApiKey(deps.db, values.user, values.name ?? null, new Date());
  console.error(`created API key ${created.id} (${created.prefix}…) for user ${values.user}; it is shown only once:`);
  console.log(created.key);
  return 0;
});
