import { Hono } from "hono";
import { methodNotAllowed } from "hono/method-not-allowed";
import type { Deps } from "@invoicing/core/deps";
import { closeAfterUnreadBody } from "../http/body";
import type { AppEnv } from "../http/app-env";
import { idempotency } from "../http/idempotency";
import { auth, publicPaths, publicRateLimit, requestId, responseHeaders } from "../http/middleware";
import { errorToResponse, problemResponse } from "../http/problems";

/**
 * A Hono app over some route modules, with the middleware every one shares. Middleware order gives
 * API.md's error precedence: auth (401) runs before routing (404 unknown route, 405), and each
 * route reads its body in its own chain (http/validators.ts jsonBody: 413 → 415 → 400) before it looks
 * anything up (404 unknown id).
 * The whole service is create-app.ts's createApp; Lambda functions that serve a part of it (lambda/api.ts,
 * lambda/documents.ts, lambda/payments.ts) build it from their own modules, so each bundle holds only
 * what it serves.
 */
export function buildApp(deps: Deps, modules: readonly Hono<AppEnv>[]): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requestId);
  app.use("*", responseHeaders);
  app.use("*", closeAfterUnreadBody);
  // A known path with another method: the 404 of no route becomes a 405 with Allow (after auth's 401).
  app.use(
    "*",
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        problemResponse(c, "method_not_allowed", `${c.req.method} is not allowed here; use ${methods.join(", ")}`, {
          Allow: methods.join(", "),
        }),
    }),
  );
  app.use("*", async (c, next) => {
    c.set("deps", deps);
    await next();
  });
  // A public link's requests count against its token's rate before anything is read (429).
  app.use("/public/*", publicRateLimit);
  // The key, then the user's rate (429), before the route does anything (http/middleware.ts).
  app.use("*", auth(publicPaths(modules.flatMap((module) => module.routes))));
  // Idempotency-Key on matched POST routes (it checks the match itself, so 404/405 still win).
  app.use("*", idempotency(app));

  for (const routes of modules) app.route("/", routes);

  app.notFound((c) => problemResponse(c, "not_found", `no route for ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => errorToResponse(c, error));
  return app;
}
