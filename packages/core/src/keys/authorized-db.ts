import {
  BatchGetCommand,
  GetCommand,
  QueryCommand,
  ScanCommand,
  TransactGetCommand,
  type GetCommandOutput,
} from "@aws-sdk/lib-dynamodb";
import { batchGet, batchKey } from "../db/batch-get";
import type { Db } from "../db/dynamodb";
import { DomainError } from "../errors";
import { keyItemKey, mayChange, principalOf, type KeyClaim, type Principal } from "./api-keys";

/**
 * One DynamoDB round trip per authenticated read, with the key still checked on every request.
 *
 * A key that names its user (`inv_<userId>_<secret>`, keys/api-keys.ts) tells the request whose
 * partition to read before the key item has been read. The request's Db, made here, lets a use case
 * read as if the user were already known, and holds back everything the key has not yet allowed:
 * - GetItems sent in the same tick before the key is known travel with the key item in ONE
 *   consistent BatchGetItem (a GET by id, or a create reading its client: one round trip);
 * - any other read (a Query for a page) is sent in parallel with the key's GetItem;
 * - no read's result is handed back before the key item has been found, belonging to the user the
 *   key names: otherwise the result is dropped and the read fails with KeyRefused;
 * - no write is sent before that check has passed, so a forged key changes nothing;
 * - in a request that may change something (`changes`: any method but GET and HEAD), a key that may
 *   only read (`read_only`) fails every read and write with insufficientScope: it changes nothing.
 * The auth middleware also waits for the check before answering (and makes it itself when the
 * request read nothing), so a refused key is a 401 whatever the route did.
 *
 * The key item is read consistently, so a revoked key (its item deleted) is refused at once; a
 * record batched with it is read consistently too (BatchGetItem has one setting per table): that
 * costs 0.5 read unit more than an eventually consistent GetItem, and saves a round trip.
 *
 * Why here, in one place: every use case reads through `ctx.db.doc.send`, so wrapping `send` covers
 * every route without a per-route copy, and a use case written later gets the same guarantee.
 */
export class KeyRefused extends Error {
  constructor() {
    super("the API key is unknown or revoked");
    this.name = "KeyRefused";
  }
}

/** A read-only key used for something that may change data (403 insufficient_scope). */
export const insufficientScope = (): DomainError =>
  new DomainError("insufficient_scope", "this API key is read-only: it may only GET (and HEAD)");

interface AuthorizedDb {
  /** The request's Db: reads and writes wait for the key check as described above. */
  db: Db;
  /** The check's outcome, making it now if no read has started it. */
  principal(): Promise<Principal | undefined>;
}

type Command = Parameters<Db["doc"]["send"]>[0];
type Output = Record<string, unknown>;

interface Pending {
  key: Record<string, unknown>;
  resolve(output: GetCommandOutput): void;
  reject(error: unknown): void;
}

/** BatchGetItem takes at most 100 keys; one is the key item's. */
const MAX_BATCH = 99;

export function authorizedDb(
  base: Db,
  claim: KeyClaim & { userId: string },
  now: Date,
  request: {
    changes: boolean;
    /**
     * What writes wait for besides the key (the request's rate-limit place, limits/rate-limit.ts):
     * a refused request writes nothing.
     */
    writesAfter?: Promise<unknown>;
  },
): AuthorizedDb {
  let check: Promise<Principal | undefined> | undefined;
  let batch: Pending[] | undefined;

  /** Why the key does not allow this request's reads and writes, if it does not. */
  const refusal = (principal: Principal | undefined): Error | undefined => {
    if (!principal) return new KeyRefused();
    if (request.changes && !mayChange(principal)) return insufficientScope();
    return undefined;
  };

  const allowed = async (): Promise<Principal> => {
    const principal = await check!;
    const refused = refusal(principal);
    if (refused) throw refused;
    return principal!;
  };

  const checkAlone = (): Promise<Principal | undefined> =>
    observed(
      base.doc
        .send(new GetCommand({ TableName: base.table, Key: keyItemKey(claim), ConsistentRead: true }))
        .then((out) => principalOf(base, claim, out.Item, now)),
    );

  /** Sends the GetItems gathered this tick and the key item as one BatchGetItem. */
  function flush(pending: Pending[]): Promise<Principal | undefined> {
    const keys = [keyItemKey(claim), ...pending.map((p) => p.key)];
    const result = batchGet(base, keys).then(
      (items) => {
        const principal = principalOf(base, claim, items.get(batchKey(keyItemKey(claim))), now);
        const refused = refusal(principal);
        for (const p of pending) {
          if (refused) p.reject(refused);
          else p.resolve({ Item: items.get(batchKey(p.key)), $metadata: {} });
        }
        return principal;
      },
      (error: unknown) => {
        for (const p of pending) p.reject(error);
        throw error;
      },
    );
    return result;
  }

  const send = (command: Command): Promise<Output> => {
    if (batchable(command, base.table) && (batch || !check) && (batch?.length ?? 0) < MAX_BATCH) {
      const input = (command as GetCommand).input;
      const pending = new Promise<GetCommandOutput>((resolve, reject) => {
        if (!batch) {
          const gathering: Pending[] = [];
          batch = gathering;
          let started!: (p: Promise<Principal | undefined>) => void;
          check = observed(new Promise<Principal | undefined>((resolveCheck) => (started = resolveCheck)));
          // Everything sent in this tick (a Promise.all of reads) joins the same request.
          queueMicrotask(() => {
            batch = undefined;
            started(observed(flush(gathering)));
          });
        }
        batch.push({ key: input.Key!, resolve, reject });
      });
      return pending as Promise<Output>;
    }
    check ??= checkAlone();
    if (isRead(command)) {
      const read = base.doc.send(command as never) as Promise<Output>;
      // The read runs alongside the check; its result is dropped if the check fails.
      return Promise.all([read, allowed()]).then(([out]) => out);
    }
    return allowed()
      .then(() => request.writesAfter)
      .then(() => base.doc.send(command as never) as Promise<Output>);
  };

  const doc = Object.create(base.doc, { send: { value: send } }) as Db["doc"];
  return {
    db: { doc, table: base.table },
    principal: () => (check ??= checkAlone()),
  };
}

/**
 * The check may fail (DynamoDB unavailable) before anyone awaits it — the middleware does, after the
 * route — and Node ends the process on a rejection nobody handles. Its awaiters still see the error.
 */
function observed<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** A plain GetItem of this table: the only read that can ride along in the key's BatchGetItem. */
function batchable(command: Command, table: string): boolean {
  if (!(command instanceof GetCommand)) return false;
  const input = command.input;
  return input.TableName === table && !input.ProjectionExpression && !input.AttributesToGet && Boolean(input.Key);
}

/** Reads may run alongside the check; anything else (a write, an unknown command) waits for it. */
const READS = [GetCommand, QueryCommand, BatchGetCommand, ScanCommand, TransactGetCommand];
const isRead = (command: Command): boolean => READS.some((kind) => command instanceof kind);
