import type { Deps } from "@invoicing/core/deps";
import { attachMeter, type Meter } from "../test/support/metering";
import { createApiKey } from "@invoicing/core/keys/api-keys";
import { createApp } from "@invoicing/functions/app/create-app";
import { createFreshTable } from "../test/support/table";

/** A fresh table in the bench's DynamoDB Local, the real app over it, metered, with a settable clock. */
export interface World {
  deps: Deps;
  app: ReturnType<typeof createApp>;
  meter: Meter;
  clock: { now: Date };
  key: string;
  userId: string;
}

export async function createWorld(
  endpoint: string,
  now = "2026-11-22T09:30:00.000Z",
  extraDeps: Partial<Deps> = {},
): Promise<World> {
  const { db } = await createFreshTable(endpoint, "bench");
  const clock = { now: new Date(now) };
  const deps: Deps = { db, clock: () => clock.now, publicBaseUrl: "http://localhost:3000", ...extraDeps };
  const meter = attachMeter(db.doc);
  const userId = "bench";
  const { key } = await createApiKey(db, userId, "bench", clock.now);
  return { deps, app: createApp(deps), meter, clock, key, userId };
}
