import { Hono } from "hono";
import { listInvoiceReminders } from "@invoicing/core/invoices/reminders";
import type { AppEnv } from "../http/app-env";
import { describe, list } from "../http/describe";
import { idParam } from "../http/params";
import { Reminder } from "../schemas/resources";

/** GET /invoices/{id}/reminders: the invoice's reminders by scheduledAt (short and bounded: no paging). */
export const reminders = new Hono<AppEnv>().get(
  "/invoices/:id/reminders",
  describe({
    operationId: "listInvoiceReminders",
    tag: "Invoices",
    summary: "List an invoice's reminders",
    description:
      "Ordered by `scheduledAt`; cancelled ones stay listed; empty before send. A short list, not paginated.",
    success: list(Reminder, "The reminders."),
  }),
  async (c) => c.json(await listInvoiceReminders(c.get("ctx"), idParam(c))),
);
