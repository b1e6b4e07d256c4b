import type { Hono } from "hono";
import type { AppEnv } from "../http/app-env";
import { documentRouteModules } from "./documents-routes";
import { paymentRouteModules } from "./payments-routes";

/**
 * The paths a function's route modules serve, as API Gateway routes name them (`/invoices/{id}/pdf`),
 * in the order they are registered. infra/api.ts routes each path of the documents and payments
 * functions to its function (it runs this module in a child Node to read them), so a route added to
 * one of their modules is deployed with it; the API function takes everything else ($default).
 */
export function pathsOf(modules: readonly Hono<AppEnv>[]): string[] {
  const paths = modules.flatMap((module) =>
    module.routes.filter((r) => r.method !== "ALL").map((r) => r.path.replace(/:(\w+)/g, "{$1}")),
  );
  return [...new Set(paths)];
}

/** The paths of the functions API Gateway routes by path (infra/api.ts). */
export const functionPaths = (): { documents: string[]; payments: string[] } => ({
  documents: pathsOf(documentRouteModules),
  payments: pathsOf(paymentRouteModules),
});
