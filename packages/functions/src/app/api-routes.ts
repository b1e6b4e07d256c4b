import { apiKeys } from "../routes/api-keys";
import { clients } from "../routes/clients";
import { creditNotes } from "../routes/credit-notes";
import { emailDeliveries } from "../routes/email-deliveries";
import { estimates } from "../routes/estimates";
import { events } from "../routes/events";
import { health } from "../routes/health";
import { invoices } from "../routes/invoices";
import { payments } from "../routes/payments";
import { profile } from "../routes/profile";
import { peppol } from "../routes/peppol";
import { publicHeaders } from "../routes/public/headers";
import { reminders } from "../routes/reminders";
import { reports } from "../routes/reports";
import { schedules } from "../routes/schedules";

/**
 * What the API Lambda (api.ts, API Gateway's $default route) serves: everything JSON. Documents
 * (the public HTML pages, PDFs, e-invoices, and the API's own description /openapi.json and /docs:
 * documents-routes.ts) and the card processor's paths (payments-routes.ts: the pay link, its
 * webhook, refunds) have their own functions, so pdf-lib, Hono's JSX, the OpenAPI builder and the
 * Stripe SDK's routes are not in the bundle every request's cold start loads.
 * publicHeaders comes early: the public security headers cover every /public answer, 404s too.
 */
export const apiRouteModules = [
  health,
  publicHeaders,
  apiKeys,
  profile,
  peppol,
  clients,
  invoices,
  reminders,
  estimates,
  schedules,
  payments,
  creditNotes,
  emailDeliveries,
  events,
  reports,
] as const;
