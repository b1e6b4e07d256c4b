import { tableDefinition } from "../packages/core/src/db/table-definition";
import { isProduction } from "./runtime";

/**
 * The single table, from the same definition the local stack turns into CreateTable
 * (packages/local/src/bootstrap.ts): test/deploy/table-parity.test.ts checks the two agree. Each
 * GSI's projection is the definition's (docs/data-model.md, "Index projections"): ALL where readers
 * show whole items (byStatus, byClient: list pages; byToken: the public page), KEYS_ONLY for byDue
 * (the jobs' dispatchers read keys; their workers read the record). Production refuses deletion on
 * top of the app's `removal: "retain"` (sst.config.ts: SST retains tables); other stages drop their
 * table on `sst remove`.
 */
const globalIndexes = tableDefinition.globalIndexes;

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
