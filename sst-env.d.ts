/* Hand-written: SST generates this file only when it deploys, with the same content. */
/* The resources each function links (infra/api.ts, infra/jobs.ts), as `Resource` from "sst" reads them. */
import "sst";
declare module "sst" {
  export interface Resource {
    Api: { type: "sst.aws.ApiGatewayV2"; url: string };
    Bus: { type: "sst.aws.Bus"; name: string; arn: string };
    Email: { type: "sst.aws.Email"; sender: string; configSet: string };
    StripeSecretKey: { type: "sst.sst.Secret"; value: string };
    StripeWebhookSecret: { type: "sst.sst.Secret"; value: string };
    Table: { type: "sst.aws.Dynamo"; name: string };
  }
}
export {};
