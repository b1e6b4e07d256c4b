import { Hono } from "hono";
import { listEmailDeliveries } from "@invoicing/core/email/deliveries";
import type { AppEnv } from "../http/env";
import { describe, list } from "../openapi/describe";
import { EmailDelivery } from "../schemas/resources";

/**
 * GET /email-deliveries: the user's latest 100 emails, newest first, with what became of each —
 * an addition to API.md (which is silent on delivery problems), so no documented resource changes
 * shape (docs/email-and-public-pages.md, "Bounces and complaints").
 */
export const emailDeliveries = new Hono<AppEnv>().get(
  "/email-deliveries",
  describe({
    operationId: "listEmailDeliveries",
    tag: "Email",
    summary: "List what became of the latest emails",
    description:
      "The latest 100 emails (invoices, estimates, reminders), newest first. `status`: `pending`, `sending`, `sent`, " +
      "`failed` (the service gave up sending: `detail` names the error, e.g. SES's sandbox refusing an unverified " +
      "recipient), or what SES reported after taking it: `bounced` (`detail` e.g. `Permanent/NoEmail`), `complained`, " +
      "`rejected`. A short list, not paginated.",
    success: list(EmailDelivery, "The emails."),
  }),
  async (c) => c.json(await listEmailDeliveries(c.get("ctx"))),
);
