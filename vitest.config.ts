import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // A timeout catches a hang; it never measures speed (that is `npm run bench`'s). Generous, so that
    // a 2-core machine under heavy load (a load average of 20 seen while other work ran) still passes.
    testTimeout: 180_000,
    hookTimeout: 300_000,
    // Two cores: files run in parallel forks, each with its own table in one DynamoDB Local.
    pool: "forks",
    maxWorkers: 2,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
  },
});
