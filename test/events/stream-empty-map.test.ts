import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { expect, it } from "vitest";
import { createStreamReader } from "@invoicing/local/stream-reader";
import type { StreamRecord } from "@invoicing/core/stream/subscriber";
import { createTestEnv } from "../support/env";

/**
 * The local stream reader hands the subscriber images that unmarshall: an empty map (which the
 * Streams client reads as a typeless `{}`) comes as `{"M":{}}`, at any depth, as in Lambda's event.
 * Before, the record of an invoice after a goodwill-only credit note (`creditedQuantities: {}`)
 * failed for ever and held back every later record of its shard.
 */
it("an empty map in a stream image reaches the subscriber as an empty map", async () => {
  const env = await createTestEnv();
  const item = { pk: "USER#empty-map", sk: "CLIENT#0000000001", list: [], map: {}, nested: { a: {}, b: [], c: [{}] } };
  await env.deps.db.doc.send(new PutCommand({ TableName: env.deps.db.table, Item: item }));
  // A client's key: the reader hands on only the records the deployed subscriber gets (stream/filter.ts).
  const seen: StreamRecord[] = [];
  const reader = createStreamReader(env.deps, {
    endpoint: env.endpoint,
    tableName: env.tableName,
    handle: async (records) => {
      seen.push(...records);
      return {};
    },
  });
  await reader.drain();
  reader.close();
  expect(seen.map((r) => r.dynamodb?.NewImage)).toEqual([
    {
      pk: { S: "USER#empty-map" },
      sk: { S: "CLIENT#0000000001" },
      list: { L: [] },
      map: { M: {} },
      nested: { M: { a: { M: {} }, b: { L: [] }, c: { L: [{ M: {} }] } } },
    },
  ]);
});
