import type { Deps } from "../context";
import { dueItems } from "../db/due";
import { transition } from "../db/transition";
import { DomainError } from "../errors";
import type { JobResult } from "../job";

/**
 * The `overdue` job: a sent invoice whose dueDate is earlier than `now` becomes overdue. It reads
 * only the byDue list of sent invoices; the transition is conditional on `sent`, so a second or
 * concurrent run changes nothing (the invoice has already left the list or fails the condition).
 */
export async function runOverdueJob(deps: Deps, now: Date): Promise<JobResult> {
  const nowIso = now.toISOString();
  let changed = 0;
  let skipped = 0;
  for await (const item of dueItems(deps.db, "overdue", nowIso, { inclusive: false })) {
    const userId = item.userId as string;
    const id = item.id as number;
    try {
      await transition(
        { ...deps, userId },
        {
          kind: "INVOICE",
          id,
          from: ["sent"],
          to: "overdue",
          set: { updatedAt: nowIso },
          notFound: () => new DomainError("not_found", "gone"),
          invalid: () => new DomainError("invalid_transition", "no longer sent"),
        },
      );
      changed++;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      skipped++; // paid, voided or already made overdue by a concurrent run
    }
  }
  return { job: "overdue", now: nowIso, changed, skipped };
}
