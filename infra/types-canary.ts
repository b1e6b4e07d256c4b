import { STAGES } from "./stages";

/**
 * Proof that `npm run typecheck` really checks infra against SST's component types: each call below
 * passes an argument SST rejects, and the @ts-expect-error above it demands that rejection. If the
 * platform types ever stopped applying (say `sst` became `any` because .sst/platform changed), the
 * directives would go unused and the check would fail instead of passing vacuously.
 * Never imported by sst.config.ts, so SST never runs it.
 */
export function wrongArgumentsAreRejected(): void {
  // @ts-expect-error: a schedule is rate(…), cron(…) or at(…)
  new sst.aws.CronV2("Canary", { schedule: "every 15 minutes", function: "canary.handler" });
  // @ts-expect-error: a field type is "string", "number" or "binary"
  new sst.aws.Dynamo("Canary", { fields: { pk: "text" }, primaryIndex: { hashKey: "pk" } });
  // @ts-expect-error: no such ApiGatewayV2 argument
  new sst.aws.ApiGatewayV2("Canary", { accessLogs: { retention: "1 month" } });
}

/** Production must page someone and have a domain: the stage map's type refuses either missing (infra/stages.ts). */
export function productionWithoutPagerIsRejected(): void {
  // @ts-expect-error: production's alarms are AlarmTargets, never false
  const noPager: (typeof STAGES)["production"] = { ...STAGES.production, alarms: false };
  // @ts-expect-error: production's domain is required
  const noDomain: (typeof STAGES)["production"] = { ...STAGES.production, domain: undefined };
  void [noPager, noDomain];
}
