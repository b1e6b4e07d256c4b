/// <reference path="./.sst/platform/config.d.ts" />

/**
 * The deployed app (docs/deploying.md). Each stage is a separate copy: its own table, API,
 * schedules and secrets, with its settings in infra/stages.ts. `production` is protected: `sst
 * remove` refuses it, and removing a resource from this file keeps it in AWS: the table (SST's
 * `retain` keeps tables), and, marked `retainOnDelete` in infra, the API and its routes, the SES
 * identity and configuration set. The table besides has deletion protection. Other stages are
 * disposable: `sst remove` deletes everything.
 *
 * Infra modules are imported inside run(), never at the top: SST evaluates this file before the
 * `sst` and `$app` globals exist.
 */
export default $config({
  async app(input) {
    const production = input?.stage === "production";
    // Region, profile and account per stage (infra/stages.ts): a shell with another default region or
    // profile deploys to the same place, and the provider refuses any account but the stage's own.
    // In CI the credentials come from the environment (an OIDC role), so no profile is named there.
    const { stageSettings } = await import("./infra/stages");
    const stage = stageSettings(input?.stage ?? "");
    return {
      name: "invoicing",
      home: "aws",
      removal: production ? "retain" : "remove",
      protect: production,
      providers: {
        aws: {
          region: stage.region,
          ...(process.env.CI ? {} : { profile: stage.profile }),
          allowedAccountIds: [stage.account],
        },
      },
    };
  },
  async run() {
    await import("./infra/storage");
    const { emailDnsRecords, emailDkimTokens } = await import("./infra/email");
    await import("./infra/secrets");
    const { api, publicUrl, apiDomainTarget } = await import("./infra/api");
    await import("./infra/jobs");
    await import("./infra/stream");
    // Last: it alarms on every function declared above; the dashboard shows them.
    await import("./infra/alarms");
    await import("./infra/budget");
    await import("./infra/dashboard");
    // The public base URL (the custom domain, or API Gateway's own on a personal stage) and API
    // Gateway's own; a domain whose DNS is not on Route 53 gets the target its CNAME must name; a
    // domain sender whose DNS is not on Route 53, the records to add.
    return {
      url: publicUrl.properties.url,
      api: api.url,
      ...(apiDomainTarget ? { apiDomainTarget } : {}),
      ...(emailDnsRecords ? { emailDnsRecords, emailDkimTokens } : {}),
    };
  },
});
