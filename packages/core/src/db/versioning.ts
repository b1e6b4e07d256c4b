import type { TransactItem } from "./commit";
import { DomainError } from "../errors";
import { withIndexKeys } from "./keys";

/**
 * Optimistic concurrency: every mutable record has a `version` that each write increments and
 * conditions on. The version is also the record's ETag.
 */
export const etagOf = (version: number): string => `"${version}"`;

/** If-Match: "*" or a list of strong ETags; weak ETags never match (RFC 9110 strong comparison). */
export function assertIfMatch(ifMatch: string | undefined, version: number): void {
  if (ifMatch === undefined) return;
  const wanted = ifMatch.split(",").map((t) => t.trim());
  if (wanted.includes("*") || wanted.includes(etagOf(version))) return;
  throw new DomainError("precondition_failed", "If-Match does not match the current ETag");
}

/**
 * The write of a record read at `version`, replaced whole by `item` only if nobody has written it
 * since (and, with `statuses`, only while it is in one of them): optimistic concurrency in one
 * conditional Put. The caller's onConditionFailed tells a vanished record, a wrong status and a
 * lost race apart from the record as it is (ALL_OLD). A listed record's index attributes are
 * derived from the item as written (keys.ts withIndexKeys), never taken from the caller.
 */
export function putIfVersion(
  table: string,
  item: object,
  version: number,
  statuses?: readonly string[],
): { Put: NonNullable<TransactItem["Put"]> } {
  const names: Record<string, string> = { "#version": "version" };
  const values: Record<string, unknown> = { ":v": version };
  let condition = "#version = :v";
  if (statuses?.length) {
    names["#status"] = "status";
    statuses.forEach((status, i) => {
      values[`:status${i}`] = status;
    });
    condition += ` AND #status IN (${statuses.map((_, i) => `:status${i}`).join(", ")})`;
  }
  return {
    Put: {
      TableName: table,
      Item: withIndexKeys(item) as Record<string, unknown>,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/** Whether a PATCH names no field: `{}` changes nothing, not even updatedAt or the ETag. */
export const isEmptyPatch = (patch: object): boolean => Object.values(patch).every((value) => value === undefined);
