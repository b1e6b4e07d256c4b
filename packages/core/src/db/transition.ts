import { putIfVersion } from "./versioning";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { commit, type CommitContext } from "./commit";
import { optimistic, Raced } from "./optimistic";
import { entityKey, mayBeDue, OFF_DUE_LIST, statusIndexKeys, withIndexKeys, type ListedKind } from "./keys";

/** The storage and the user whose item changes (a use case's Ctx has both; db/ does not import it). */
type Ctx = CommitContext & { userId: string };

/**
 * A status change of one listed record, as one conditional write: it happens only if the record is
 * in one of the `from` statuses (and, with `before`, while an attribute of it is earlier than a
 * time), so N concurrent identical transitions give exactly one success. The index attributes
 * follow from the status written, as keys.ts withIndexKeys derives them: the byStatus entry moves,
 * and the record leaves its job's due list.
 *
 * Without a commit hook it is a single UpdateItem through commit(), returning the new record (one
 * DynamoDB call).
 * With one (an idempotent request) the new record must be known before the write, so it reads,
 * computes the record, and writes it conditioned on the version it read, in the hook's transaction.
 */
interface TransitionSpec {
  kind: ListedKind;
  id: number;
  from: readonly string[];
  to: string;
  /** Other attributes to set. */
  set?: Record<string, unknown>;
  /** The transition applies only while `attr` is earlier than `at` (ISO times compare as strings). */
  before?: { attr: string; at: string };
  notFound: () => Error;
  /** The error for a record in a status (or state) the transition does not start from. */
  invalid: (current: Record<string, unknown>) => Error;
}

/** What the transition sets: the status, its byStatus entry, and the caller's attributes. */
function changes(ctx: Pick<Ctx, "userId">, spec: TransitionSpec): Record<string, unknown> {
  // An UpdateItem cannot read the record's date for a due-list entry: a change INTO a due list's
  // status is a whole-record write (putIfVersion), which derives the entry from the item.
  if (mayBeDue(spec.kind, spec.to)) throw new Error(`transition() cannot put a record on a due list`);
  return { ...spec.set, status: spec.to, ...statusIndexKeys(ctx.userId, spec.kind, spec.to, spec.id) };
}

/** The transition's condition, on a record read (as DynamoDB evaluates it: a missing attribute is never earlier). */
function applies(spec: TransitionSpec, current: Record<string, unknown>): boolean {
  if (!spec.from.includes(current.status as string)) return false;
  if (!spec.before) return true;
  const value = current[spec.before.attr];
  return typeof value === "string" && value < spec.before.at;
}

export async function transition<T extends Record<string, unknown>>(ctx: Ctx, spec: TransitionSpec): Promise<T> {
  if (ctx.commitHook) return transitionWithHook<T>(ctx, spec);
  const names: Record<string, string> = { "#status": "status", "#version": "version" };
  const values: Record<string, unknown> = { ":one": 1 };
  const sets: string[] = ["#version = #version + :one"];
  Object.entries(changes(ctx, spec)).forEach(([attr, value], i) => {
    names[`#s${i}`] = attr;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  });
  const from = spec.from.map((status, i) => {
    values[`:f${i}`] = status;
    return `:f${i}`;
  });
  let condition = `attribute_exists(pk) AND #status IN (${from.join(", ")})`;
  if (spec.before) {
    names["#before"] = spec.before.attr;
    values[":before"] = spec.before.at;
    condition += " AND #before < :before";
  }
  // At most once, as every single write of commit() (see WRITE_TOKEN there): an SDK resend after a
  // lost response that finds its own first copy applied answers the record that copy wrote.
  const written = await commit(ctx, [
    {
      op: {
        Update: {
          TableName: ctx.db.table,
          Key: entityKey(ctx.userId, spec.kind, spec.id),
          UpdateExpression: `SET ${sets.join(", ")} REMOVE ${OFF_DUE_LIST}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      onConditionFailed: (old) => (old ? spec.invalid(old) : spec.notFound()),
    },
  ]);
  return written as T;
}

async function transitionWithHook<T extends Record<string, unknown>>(ctx: Ctx, spec: TransitionSpec): Promise<T> {
  const key = entityKey(ctx.userId, spec.kind, spec.id);
  return optimistic("record", async () => {
    const out = await ctx.db.doc.send(new GetCommand({ TableName: ctx.db.table, Key: key, ConsistentRead: true }));
    const current = out.Item;
    if (!current) throw spec.notFound();
    if (!applies(spec, current)) throw spec.invalid(current);
    const next: Record<string, unknown> = {
      ...current,
      ...changes(ctx, spec),
      version: (current.version as number) + 1,
    };
    await commit(
      ctx,
      [
        {
          op: putIfVersion(ctx.db.table, next, current.version),
          onConditionFailed: (old) => {
            if (!old) return spec.notFound();
            if (!applies(spec, old)) return spec.invalid(old);
            return new Raced();
          },
        },
      ],
      next,
    );
    return withIndexKeys(next) as T;
  });
}
