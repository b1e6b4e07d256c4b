import { Hono } from "hono";
import { listEmailDeliveries } from "@invoicing/core/email/deliveries";
import { resendEmail } from "@invoicing/core/email/resend";
import type { AppEnv } from "../http/app-env";
import { actionBody } from "../http/validators";
import { describe, list } from "../http/describe";
import { EmailDelivery } from "../schemas/resources";

/**
 * GET /email-deliveries: the user's latest 100 emails, newest first, with what became of each
 * (API.md section 15; docs/email-and-public-pages.md, "Bounces and complaints").
 * POST /email-deliveries/{id}/resend: a failed email sent again, as a new email (core/src/email/resend.ts;
 * docs/operations.md) — the counterpart of a webhook's redeliver.
 */
export const emailDeliveries = new Hono<AppEnv>()
  .get(
    "/email-deliveries",
    describe({
      operationId: "listEmailDeliveries",
      tag: "Email",
      summary: "List what became of the latest emails",
      description:
        "The latest 100 emails, newest first (invoices, estimates, credit notes, reminders). `status`: `pending`, `sending`, `sent`, " +
        "`failed` (the service gave up sending: `detail` names the error, e.g. SES's sandbox refusing an unverified " +
        "recipient), or what SES reported after taking it: `bounced` (`detail` e.g. `Permanent/NoEmail`), `complained`, " +
        "`rejected`. A short list, not paginated.",
      success: list(EmailDelivery, "The emails."),
    }),
    async (c) => c.json(await listEmailDeliveries(c.get("ctx"))),
  )
  .post(
    "/email-deliveries/:email/resend",
    describe({
      operationId: "resendEmail",
      tag: "Email",
      summary: "Send a failed email again",
      description:
        "A `failed` email (the service gave up, or its sending was interrupted: `detail` " +
        "`DeliveryInterrupted`, when it may have arrived after all) queued again as a new email, a copy with " +
        "the attachment drawn afresh, answered `pending`; `GET /email-deliveries` then shows both. The service " +
        "never resends by itself. An email is resent once; a resend that fails can be resent in its turn. " +
        "404 for an unknown id; 422 `invalid_transition` for an email that is not `failed` (pending, sending, " +
        "sent, or reported bounced, complained or rejected by SES — it would fail the same way) or already resent.",
      success: { status: 200, description: "The new email, pending.", schema: EmailDelivery },
      problems: ["invalid_transition"],
    }),
    actionBody,
    async (c) => c.json(await resendEmail(c.get("ctx"), c.req.param("email")), 200),
  );
