import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isDue } from "../src/db/keys";

/** The due lists' entry and the overdue rule, each written in one place (db/keys.ts). */

const SRC = join(import.meta.dirname, "../src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("due lists", () => {
  it("no write outside db/ spells a due-list entry: each derives it through db/keys.ts", () => {
    // An UpdateExpression or condition that names the entry's attributes itself (SET duePk = …,
    // REMOVE duePk, dueSk, duePk = :pk) would not follow a change of the entry's shape.
    const spelled = /duePk\s*=|dueSk\s*=|duePk,\s*dueSk/;
    const offenders = sources(SRC)
      .filter((file) => !file.includes(`${join("src", "db")}`))
      .filter((file) => spelled.test(readFileSync(file, "utf8")));
    expect(offenders).toEqual([]);
  });

  it("an invoice is overdue once its dueDate is strictly earlier than now; the other jobs act at their time", () => {
    expect(isDue("overdue", "2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z")).toBe(false);
    expect(isDue("overdue", "2026-02-28T23:59:59.999Z", "2026-03-01T00:00:00.000Z")).toBe(true);
    expect(isDue("expire-estimates", "2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z")).toBe(false);
    expect(isDue("reminders", "2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z")).toBe(true);
    expect(isDue("outbox", "2026-03-01T00:00:00.001Z", "2026-03-01T00:00:00.000Z")).toBe(false);
  });
});
