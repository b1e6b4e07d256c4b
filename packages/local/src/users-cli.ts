import "./quiet-sdk";
import { parseArgs } from "node:util";
import { readUserLimits, setUserLimits } from "@invoicing/core/limits/user-limits";
import { runCommandLine, userOfCommandLine } from "./stack";

/**
 * `npm run --silent users -- limits --user <userId> [--requests-per-second N] [--emails-per-day N]`:
 * sets a user's own limits (API.md section 16) and prints the limits in force as one JSON line
 * `{ userId, requestsPerSecond, emailsPerDay }`; without options it only prints them. Reaches the
 * DynamoDB of a running `npm start` with the same DATA_DIR, or a deployed stage's under
 * `npx sst shell`. The defaults printed for a user without its own limits are this shell's
 * API_RATE_LIMIT and EMAIL_DAILY_QUOTA (else 50 and 200), as for the server.
 */
const USAGE =
  "usage: npm run --silent users -- limits --user <userId> [--requests-per-second <N>] [--emails-per-day <N>]";

runCommandLine(async (open) => {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      user: { type: "string" },
      "requests-per-second": { type: "string" },
      "emails-per-day": { type: "string" },
    },
  });
  const userId = userOfCommandLine(positionals[0] === "limits", values.user, USAGE);
  if (!userId) return 2;
  const requestsPerSecond = count(values["requests-per-second"]);
  const emailsPerDay = count(values["emails-per-day"]);
  if (requestsPerSecond === null || emailsPerDay === null) {
    console.error("--requests-per-second and --emails-per-day take a positive integer");
    return 2;
  }
  const deps = await open();
  const limits =
    requestsPerSecond === undefined && emailsPerDay === undefined
      ? await readUserLimits(deps, userId)
      : await setUserLimits(deps, userId, { requestsPerSecond, emailsPerDay });
  console.log(JSON.stringify(limits));
  return 0;
});

/** A positive integer option: undefined when absent, null when malformed. */
function count(value: string | undefined): number | undefined | null {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,8}$/.test(value)) return null;
  return Number(value);
}
