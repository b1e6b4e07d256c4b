import type { Deps } from "../deps";
import type { StreamChange } from "../db/dynamodb";
import { reconcile } from "./aggregates";
import { countedKind, factsOf } from "./contribution";

/**
 * The reports' part of the stream subscriber (stream/subscriber.ts calls it once per record): a
 * change of an invoice, payment or credit note that moves a figure is counted (aggregates.ts
 * reconcile: once per version of the record, however often the stream delivers it). Every other
 * item — the aggregates and ledger entries this writes among them — counts nothing and costs
 * nothing: no read, no write. A failure fails the record, which the stream gives again.
 */
export async function countChange(
  deps: Pick<Deps, "db" | "clock">,
  change: StreamChange,
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown> | undefined,
): Promise<void> {
  const image = after ?? before;
  if (!image || typeof image.pk !== "string" || !image.pk.startsWith("USER#")) return;
  const sk = image.sk as string;
  if (!countedKind(sk)) return;
  if (factsOf(before) === factsOf(after)) return; // a send, an overdue, a status that follows a payment
  const userId = image.pk.slice("USER#".length);
  await reconcile(deps, userId, sk, change === "REMOVE" || !after ? { removed: true } : { image: after });
}
