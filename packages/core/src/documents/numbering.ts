import type { Ctx } from "../context";
import type { Write } from "../db/commit";
import { counterValue, MAX_TAKE_ATTEMPTS, takeBackoff, takeCounterWrite } from "../db/ids";

/**
 * Gapless per-user document numbers (INV-000001 at finalize, EST-000001 at creation). The counter
 * is not bumped on its own (that would leave a gap when the document's write fails): the caller
 * reads the last number, and its transaction both writes the document and moves the counter from
 * that value to the next, conditioned on the value read. Losing a race means read again and retry.
 */
export type NumberPrefix = "INV" | "EST";
export type NumberCounter = "invoiceNumber" | "estimateNumber";

export const formatDocumentNumber = (prefix: NumberPrefix, n: number): string =>
  `${prefix}-${String(n).padStart(6, "0")}`;

/** The last number a user's sequence gave out (0 before the first). */
export const lastNumber = (ctx: Pick<Ctx, "db" | "userId">, counter: NumberCounter): Promise<number> =>
  counterValue(ctx, counter);

/**
 * The write that takes number `last + 1`, for the document's own transaction. `onTaken` is the
 * error when another writer took it first (the caller's cue to read again and retry).
 */
export const takeNumberWrite = (
  ctx: Pick<Ctx, "db" | "userId">,
  counter: NumberCounter,
  last: number,
  onTaken: () => Error,
): Write => takeCounterWrite(ctx, counter, last, onTaken);

/** Many writers of one sequence retry often; this bounds the waiting and spreads them out. */
export const MAX_NUMBERING_ATTEMPTS = MAX_TAKE_ATTEMPTS;
export const numberingBackoff = takeBackoff;
