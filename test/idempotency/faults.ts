import type { Db } from "@invoicing/core/db/dynamodb";

/**
 * Holds the first DynamoDB command that `matches` until `release()`: the real client and the real
 * DynamoDB Local, with the request frozen at one point, as a process that stalls or dies there
 * would leave it. Installed on the client the app uses (env.deps.db), as an SDK middleware.
 */
export interface Gate {
  /** Resolves when a matching command has been caught (it is then on hold). */
  reached: Promise<void>;
  release(): void;
  remove(): void;
}

// command inputs of every shape
export type CommandMatcher = (command: string, input: any) => boolean;

let gates = 0;

export function gate(db: Db, matches: CommandMatcher): Gate {
  let armed = true;
  let caught!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (caught = resolve));
  const released = new Promise<void>((resolve) => (open = resolve));
  const name = `test-gate-${++gates}`;
  db.doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (armed && matches(String(context.commandName), args.input)) {
        armed = false;
        caught();
        await released;
      }
      return next(args);
    },
    { step: "initialize", name },
  );
  return { reached, release: open, remove: () => void db.doc.middlewareStack.remove(name) };
}

/** The transaction that carries a change together with its idempotency record. */
export const effectTransaction: CommandMatcher = (command, input) =>
  command === "TransactWriteItemsCommand" &&
  input.TransactItems.some((item: any) => String(item.Update?.Key?.sk ?? "").startsWith("IDEMPOTENCY#"));

/** The write that stores the response once the change is done. */
export const responseStore: CommandMatcher = (command, input) =>
  command === "UpdateItemCommand" &&
  String(input.Key?.sk ?? "").startsWith("IDEMPOTENCY#") &&
  input.ExpressionAttributeValues?.[":response"] !== undefined;
