import { beforeAll, describe, expect, it } from "vitest";
import { commit } from "@invoicing/core/db/commit";
import { EVENT_RETENTION_SECONDS, eventItem, putEvent } from "@invoicing/core/events/store";
import { createTestEnv, type TestEnv, type TestUser } from "../support/env";
import { ok } from "../invoices/fixtures";

/**
 * Events are kept 30 days. DynamoDB's TTL deletes an expired item only eventually (often days
 * later), so GET /events must leave out what is older than 30 days by itself, under every filter.
 */
let env: TestEnv;
let user: TestUser;
const DAY = 86_400_000;

beforeAll(async () => {
  env = await createTestEnv();
  user = await env.user();
  // Stored as the stream subscriber stores them, with the times of changes long past.
  const stored = (daysAgo: number, sequence: number) =>
    eventItem(
      {
        eventId: `e-${sequence}`,
        sequenceNumber: String(sequence),
        createdAt: new Date(env.clock.now.getTime() - daysAgo * DAY).toISOString(),
      },
      0,
      { userId: user.userId, type: "client.updated", resourceType: "client", resourceId: 7, data: { daysAgo } },
    );
  const items = [stored(31, 100), stored(30.01, 101), stored(29.99, 102), stored(1, 103)];
  await commit(
    env.deps,
    items.map((item) => putEvent(env.deps.db, item)),
  );
});

const listed = async (query: string) =>
  (ok(await user.call("GET", `/events${query}`)).body as { data: { daysAgo: number } }[]).map((e) => e.data.daysAgo);

describe("GET /events keeps to the last 30 days", () => {
  it("leaves out events older than 30 days whatever the filter; newest first", async () => {
    expect(EVENT_RETENTION_SECONDS).toBe(30 * 86_400);
    for (const query of ["", "?type=client.updated", "?resourceType=client&resourceId=7", "?resourceType=client"]) {
      expect(await listed(query), query || "no filter").toEqual([1, 29.99]);
    }
  });

  it("an event passes out of the list as the clock passes its 30 days", async () => {
    env.clock.advance(DAY);
    try {
      expect(await listed("")).toEqual([1]);
    } finally {
      env.clock.advance(-DAY);
    }
  });
});
