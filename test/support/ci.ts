/**
 * Whether this run is CI's. CI services set CI=true (GitHub Actions, GitLab, …; .ci/run does too);
 * any other non-empty value but "false" and "0" counts as well (some set CI=1), so a test that must
 * run under CI is never skipped because of how the variable is spelled.
 */
export const IN_CI = ((value) => value !== "" && value !== "false" && value !== "0")(
  (process.env.CI ?? "").trim().toLowerCase(),
);

/** Prints why a test is skipped, loudly, and returns the reason (for `describe.skipIf` and `ctx.skip`). */
export function skipNotice(test: string, reason: string): string {
  console.warn(`\n${"!".repeat(100)}\n!! SKIPPING ${test}: ${reason}\n${"!".repeat(100)}\n`);
  return reason;
}
