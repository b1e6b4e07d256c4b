import { tableDefinition } from "../packages/core/src/db/table-definition";
import { isProduction } from "./runtime";

/**
 * The single table, from the same definition the local stack turns into CreateTable
 * (packages/local/src/bootstrap.ts): test/deploy/table-parity.test.ts checks the two agree.
 * Every GSI projects all attributes, as the local table's do. Production refuses deletion on top of
 * the app's `removal: "retain"` (sst.config.ts); other stages drop their table on `sst remove`.
 */
const globalIndexes = Object.fromEntries(
  Object.entries(tableDefinition.globalIndexes).map(([name, index]) => [
    name,
    { ...index, projection: "all" as const },
  ]),
);

export const table = new sst.aws.Dynamo("Table", {
  fields: tableDefinition.fields,
  primaryIndex: tableDefinition.primaryIndex,
  globalIndexes,
  ttl: tableDefinition.ttl,
  stream: tableDefinition.stream,
  deletionProtection: isProduction($app.stage),
});
