import { putIfVersion } from "./versioning";
import { randomUUID } from "node:crypto";
import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Ctx } from "../context";
import { commit, onceOnlyUpdate, writtenBy } from "./commit";
import { optimistic, Raced } from "./optimistic";

/**
 * A status change of one record, as one conditional write: it happens only if the record is in one
 * of the `from` statuses, so N concurrent identical transitions give exactly one success.
 *
 * Without a commit hook it is a single UpdateItem returning the new record (one DynamoDB call).
 * With one (an idempotent request) the new record must be known before the write, so it reads,
 * computes the record, and writes it conditioned on the version it read, in the hook's transaction.
 */
export interface TransitionSpec {
  key: { pk: string; sk: string };
  from: readonly string[];
  /** Attributes to set (status included). */
  set: Record<string, unknown>;
  /** Attributes to set from another attribute of the same record (e.g. amountPaid ← total). */
  copy?: Record<string, string>;
  remove?: readonly string[];
  notFound: () => Error;
  /** The error for a record in a status the transition does not start from. */
  invalid: (current: Record<string, unknown>) => Error;
}

export async function transition<T extends Record<string, unknown>>(ctx: Ctx, spec: TransitionSpec): Promise<T> {
  if (ctx.commitHook) return transitionWithHook<T>(ctx, spec);
  const names: Record<string, string> = { "#status": "status", "#version": "version" };
  const values: Record<string, unknown> = { ":one": 1 };
  const sets: string[] = ["#version = #version + :one"];
  Object.entries(spec.set).forEach(([attr, value], i) => {
    names[`#s${i}`] = attr;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  });
  Object.entries(spec.copy ?? {}).forEach(([attr, source], i) => {
    names[`#c${i}`] = attr;
    names[`#cs${i}`] = source;
    sets.push(`#c${i} = #cs${i}`);
  });
  const removes = (spec.remove ?? []).map((attr, i) => {
    names[`#r${i}`] = attr;
    return `#r${i}`;
  });
  const from = spec.from.map((status, i) => {
    values[`:f${i}`] = status;
    return `:f${i}`;
  });
  // At most once, like commit()'s single writes (see WRITE_TOKEN there): an SDK resend after a lost
  // response finds the status already changed by its own first copy — that is this transition's
  // success (the item returned is the record it wrote), not invalid_transition.
  const token = randomUUID();
  try {
    const out = await ctx.db.doc.send(
      new UpdateCommand(
        onceOnlyUpdate(
          {
            TableName: ctx.db.table,
            Key: spec.key,
            UpdateExpression: `SET ${sets.join(", ")}${removes.length ? ` REMOVE ${removes.join(", ")}` : ""}`,
            ConditionExpression: `attribute_exists(pk) AND #status IN (${from.join(", ")})`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: "ALL_NEW" as const,
            ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const,
          },
          token,
        ),
      ),
    );
    return out.Attributes as T;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      const old = error.Item ? unmarshall(error.Item) : undefined;
      if (writtenBy(old, token)) return old as T;
      throw old ? spec.invalid(old) : spec.notFound();
    }
    throw error;
  }
}

async function transitionWithHook<T extends Record<string, unknown>>(ctx: Ctx, spec: TransitionSpec): Promise<T> {
  return optimistic("record", async () => {
    const out = await ctx.db.doc.send(new GetCommand({ TableName: ctx.db.table, Key: spec.key, ConsistentRead: true }));
    const current = out.Item;
    if (!current) throw spec.notFound();
    if (!spec.from.includes(current.status as string)) throw spec.invalid(current);
    const next: Record<string, unknown> = { ...current, ...spec.set, version: (current.version as number) + 1 };
    for (const [attr, source] of Object.entries(spec.copy ?? {})) next[attr] = current[source];
    for (const attr of spec.remove ?? []) delete next[attr];
    await commit(
      ctx,
      [
        {
          op: putIfVersion(ctx.db.table, next, current.version),
          onConditionFailed: (old) => {
            if (!old) return spec.notFound();
            if (!spec.from.includes(old.status as string)) return spec.invalid(old);
            return new Raced();
          },
        },
      ],
      next,
    );
    return next as T;
  });
}
