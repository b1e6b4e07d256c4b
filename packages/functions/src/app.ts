import { Hono } from "hono";
import type { Deps } from "@invoicing/core/context";
import type { AppEnv } from "./env";
import { auth, requestId } from "./middleware";
import { HttpProblem, errorToResponse, problemResponse } from "./problems";
import { apiKeys } from "./routes/api-keys";
import { clients } from "./routes/clients";
import { health } from "./routes/health";
import { invoices } from "./routes/invoices";

/**
 * The Hono app: the same for the Lambda handler (api.ts) and the local server. Middleware order
 * gives API.md's error precedence: auth (401) runs before routing (404 unknown route, 405), and each
 * route reads its body itself (413 → 415 → 400) before it looks anything up (404 unknown id).
 */
export function createApp(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requestId);
  app.use("*", async (c, next) => {
    c.set("deps", deps);
    await next();
  });
  app.use("*", auth);

  for (const routes of [health, apiKeys, clients, invoices]) app.route("/", routes);

  addMethodNotAllowed(app);
  app.notFound((c) => problemResponse(c, "not_found", `no route for ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => errorToResponse(c, error));
  return app;
}

/** For every routed path, any other method answers 405 with the Allow header. */
function addMethodNotAllowed(app: Hono<AppEnv>): void {
  const methods = new Map<string, Set<string>>();
  for (const route of app.routes) {
    if (route.method === "ALL") continue;
    const set = methods.get(route.path) ?? new Set<string>();
    set.add(route.method);
    if (route.method === "GET") set.add("HEAD");
    methods.set(route.path, set);
  }
  for (const [path, allowed] of methods) {
    const allow = [...allowed].join(", ");
    app.all(path, (c) => {
      throw new HttpProblem("method_not_allowed", `${c.req.method} is not allowed here; use ${allow}`, { Allow: allow });
    });
  }
}
