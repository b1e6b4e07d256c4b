/**
 * The single table, declared once. infra/storage.ts hands it to sst.aws.Dynamo and the local stack
 * turns it into a CreateTable call (packages/local/src/bootstrap.ts), so the two cannot drift.
 * Pure data: no imports, because SST evaluates infra/ on its own.
 *
 * Indexes (see docs/data-model.md for the access patterns):
 * - byStatus  gsi1pk = USER#<u>#<KIND>#STATUS#<status>, gsi1sk = <padded id>: filtered lists by status
 * - byClient  gsi2pk = USER#<u>#<KIND>#CLIENT#<clientId>, gsi2sk = <padded id>: filtered lists by client
 * - byDue     duePk = DUE#<job>#<shard>, dueSk = <ISO time>#<userId>#<sk>: sparse, what a job must do
 * - byToken   publicToken: the public invoice / estimate pages
 *
 * Projections (docs/data-model.md, "Index projections"): byStatus, byClient and byToken serve whole
 * resources (list pages, the public page) and project ALL; byDue only KEYS_ONLY: a job's dispatcher
 * needs the keys (and the entry's time, in dueSk) and its queue's worker reads the record anyway, so
 * each write that puts, moves or takes a record off a due list copies ~100 bytes, not the record.
 */
export const tableDefinition = {
  fields: {
    pk: "string",
    sk: "string",
    gsi1pk: "string",
    gsi1sk: "string",
    gsi2pk: "string",
    gsi2sk: "string",
    duePk: "string",
    dueSk: "string",
    publicToken: "string",
  },
  primaryIndex: { hashKey: "pk", rangeKey: "sk" },
  globalIndexes: {
    byStatus: { hashKey: "gsi1pk", rangeKey: "gsi1sk", projection: "all" },
    byClient: { hashKey: "gsi2pk", rangeKey: "gsi2sk", projection: "all" },
    byDue: { hashKey: "duePk", rangeKey: "dueSk", projection: "keys-only" },
    byToken: { hashKey: "publicToken", projection: "all" },
  },
  ttl: "expiresAt",
  // The change stream: events, webhooks and email delivery are derived from it (docs/events.md).
  stream: "new-and-old-images",
} as const;
