/// <reference path="./.sst/platform/config.d.ts" />

/**
 * The deployed app (docs/deploying.md). Each stage is a separate copy: its own table, API,
 * schedules and secrets. `production` is protected: `sst remove` refuses it, and removing a
 * resource from this file keeps it in AWS: the table (SST's `retain` keeps tables), and, marked
 * `retainOnDelete` in infra, the API, the SES identity and configuration set, and every function's
 * log group. The table besides has deletion protection. Other stages are disposable: `sst remove`
 * deletes everything.
 *
 * Infra modules are imported inside run(), never at the top: SST evaluates this file before the
 * `sst` and `$app` globals exist.
 */
export default $config({
  app(input) {
    const production = input?.stage === "production";
    return {
      name: "invoicing",
      home: "aws",
      removal: production ? "retain" : "remove",
      protect: production,
    };
  },
  async run() {
    await import("./infra/storage");
    const { emailDnsRecords, emailDkimTokens } = await import("./infra/email");
    await import("./infra/secrets");
    const { api } = await import("./infra/api");
    await import("./infra/queues");
    await import("./infra/jobs");
    await import("./infra/stream");
    // Last: it alarms on every function declared above.
    await import("./infra/alarms");
    // The API's base URL; and, for a domain sender whose DNS is not on Route 53, the records to add.
    return { api: api.url, ...(emailDnsRecords ? { emailDnsRecords, emailDkimTokens } : {}) };
  },
});
