import type { Ctx } from "../deps";
import { counterValue } from "../db/ids";

/**
 * Gapless per-user document numbers (INV-000001 at finalize, EST-000001 at creation, CN-000001 at
 * a credit note's issue). The counter
 * is not bumped on its own (that would leave a gap when the document's write fails): the caller
 * reads the last number, and its transaction both writes the document and moves the counter from
 * that value to the next, conditioned on the value read. Losing a race means read again and retry
 * (the caller's optimistic loop, db/optimistic.ts).
 */
type NumberPrefix = "INV" | "EST" | "CN";
type NumberCounter = "invoiceNumber" | "estimateNumber" | "creditNoteNumber";

export const formatDocumentNumber = (prefix: NumberPrefix, n: number): string =>
  `${prefix}-${String(n).padStart(6, "0")}`;

/** The last number a user's sequence gave out (0 before the first). */
export const lastNumber = (ctx: Pick<Ctx, "db" | "userId">, counter: NumberCounter): Promise<number> =>
  counterValue(ctx, counter);
