import { tableDefinition } from "../packages/core/src/db/table-definition";
import { isProduction } from "./runtime";

/**
 * The single table, from the same definition the local stack turns into CreateTable
 * (packages/local/src/bootstrap.ts): test/deploy/table-parity.test.ts checks the two agree.
 * Every GSI projects all attributes, as the local table's do, because every query of each reads
 * whole items (docs/data-model.md, "Index projections"): byStatus and byClient serve list pages of
 * full resources, byToken the public page of a whole document, byDue the jobs, which act on the item
 * they find (the outbox sweep delivers the email it reads). A narrower projection would need a second
 * read per item. Production refuses deletion on top of the app's `removal: "retain"`
 * (sst.config.ts: SST retains tables); other stages drop their table on `sst remove`.
 */
const globalIndexes = Object.fromEntries(
  Object.entries(tableDefinition.globalIndexes).map(([name, index]) => [
    name,
    { ...index, projection: "all" as const },
  ]),
);

/**
 * What the app does to its table: item reads and writes, nothing else. Replaces SST's default link
 * (`dynamodb:*`, which includes UpdateTable, DeleteTable and the backup and restore actions), for
 * every function linking the table. Transactions need no action of their own: DynamoDB checks each
 * item's action (Put, Update, Delete, ConditionCheck, Get) inside them. No Scan: nothing scans.
 */
const TABLE_ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:BatchGetItem",
  "dynamodb:Query",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:ConditionCheckItem",
];
sst.Linkable.wrap(sst.aws.Dynamo, (dynamo) => ({
  properties: { name: dynamo.name },
  include: [
    sst.aws.permission({
      actions: TABLE_ACTIONS,
      resources: [dynamo.arn, dynamo.arn.apply((arn) => `${arn}/index/*`)],
    }),
  ],
}));

const production = isProduction($app.stage);
export const table = new sst.aws.Dynamo("Table", {
  fields: tableDefinition.fields,
  primaryIndex: tableDefinition.primaryIndex,
  globalIndexes,
  ttl: tableDefinition.ttl,
  stream: tableDefinition.stream,
  deletionProtection: production,
  // Point-in-time recovery in production: any second of the last 35 days can be restored (to a new
  // table; docs/operations.md, "Backups"). Other stages are disposable.
  transform: {
    table: (args) => {
      args.pointInTimeRecovery = { enabled: production };
    },
  },
});
