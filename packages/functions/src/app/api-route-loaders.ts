import type { RouteLoader } from "./lazy-routes";

/**
 * The API function's route modules (app/api-routes.ts), each as a chunk loaded at its first request
 * (app/lazy-routes.ts): the same modules in the same order, checked by test/deploy/lazy-routes.test.ts.
 * Only lambda/api.ts and the build-time route table (app/route-paths.ts) use this list; everything
 * else (the local server, the typed client, /openapi.json) imports the modules themselves.
 */
export const apiRouteLoaders: Record<string, RouteLoader> = {
  health: () => import("../routes/health").then((m) => m.health),
  publicHeaders: () => import("../routes/public/headers").then((m) => m.publicHeaders),
  apiKeys: () => import("../routes/api-keys").then((m) => m.apiKeys),
  profile: () => import("../routes/profile").then((m) => m.profile),
  clients: () => import("../routes/clients").then((m) => m.clients),
  invoices: () => import("../routes/invoices").then((m) => m.invoices),
  reminders: () => import("../routes/reminders").then((m) => m.reminders),
  estimates: () => import("../routes/estimates").then((m) => m.estimates),
  schedules: () => import("../routes/schedules").then((m) => m.schedules),
  payments: () => import("../routes/payments").then((m) => m.payments),
  creditNotes: () => import("../routes/credit-notes").then((m) => m.creditNotes),
  emailDeliveries: () => import("../routes/email-deliveries").then((m) => m.emailDeliveries),
  events: () => import("../routes/events").then((m) => m.events),
  reports: () => import("../routes/reports").then((m) => m.reports),
};
