import { statusChangeJob } from "../queue/status-job";

/**
 * The `overdue` job: a sent invoice whose dueDate is earlier than `now` becomes overdue. The run
 * dispatches the byDue list of sent invoices to the `overdue` queue; the worker makes each
 * transition, conditional on `sent` (queue/status-job.ts), so a second or concurrent run, or a
 * message given twice, changes nothing (the invoice has already left the list or fails the condition).
 */
const overdue = statusChangeJob({ job: "overdue", kind: "INVOICE", from: "sent", to: "overdue" });

export const overdueWorker = overdue.worker;
export const runOverdueJob = overdue.run;
