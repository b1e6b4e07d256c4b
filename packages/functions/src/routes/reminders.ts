import { Hono } from "hono";
import { listInvoiceReminders } from "@invoicing/core/reminders/reminders";
import type { AppEnv } from "../env";
import { idParam } from "../params";

/** GET /invoices/{id}/reminders: the invoice's reminders by scheduledAt (short and bounded: no paging). */
export const reminders = new Hono<AppEnv>().get("/invoices/:id/reminders", async (c) =>
  c.json(await listInvoiceReminders(c.get("ctx"), idParam(c))),
);
