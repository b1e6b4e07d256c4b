import { apiKeys } from "./routes/api-keys";
import { cardPayments } from "./routes/card-payments";
import { clients } from "./routes/clients";
import { docs } from "./routes/docs";
import { emailDeliveries } from "./routes/email-deliveries";
import { estimates } from "./routes/estimates";
import { events } from "./routes/events";
import { health } from "./routes/health";
import { invoices } from "./routes/invoices";
import { publicPages } from "./routes/public";
import { reminders } from "./routes/reminders";
import { schedules } from "./routes/schedules";

/**
 * What the API Lambda (api.ts, API Gateway's $default route) serves: everything JSON (and the
 * public HTML pages). Documents (PDFs, e-invoices: documents-routes.ts) and the card processor's
 * paths (payments-routes.ts) have their own functions, so pdf-lib and the Stripe SDK are not in
 * the bundle every request's cold start loads. publicPages comes early: its security headers
 * cover the other /public routes.
 */
export const apiRouteModules = [health, publicPages, apiKeys, clients, invoices, reminders, estimates, schedules, cardPayments, emailDeliveries, events, docs] as const;
