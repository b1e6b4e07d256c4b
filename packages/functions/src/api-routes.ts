import { apiKeys } from "./routes/api-keys";
import { cardProcessor } from "./routes/card-processor";
import { clients } from "./routes/clients";
import { docs } from "./routes/docs";
import { emailDeliveries } from "./routes/email-deliveries";
import { estimates } from "./routes/estimates";
import { events } from "./routes/events";
import { health } from "./routes/health";
import { invoices } from "./routes/invoices";
import { payments } from "./routes/payments";
import { publicPages } from "./routes/public/routes";
import { reminders } from "./routes/reminders";
import { schedules } from "./routes/schedules";
import { webhooks } from "./routes/webhooks";

/**
 * What the API Lambda (api.ts, API Gateway's $default route) serves: everything but the PDFs,
 * which have their own function (pdf-api.ts) so that pdf-lib, the heaviest dependency, is not in
 * the bundle every request's cold start loads. publicPages comes early: its security headers
 * cover the other /public routes.
 */
export const apiRouteModules = [
  health,
  publicPages,
  apiKeys,
  clients,
  invoices,
  reminders,
  estimates,
  schedules,
  payments,
  cardProcessor,
  webhooks,
  emailDeliveries,
  events,
  docs,
] as const;
