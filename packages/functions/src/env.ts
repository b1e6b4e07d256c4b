import type { Ctx, Deps } from "@invoicing/core/context";

/** Hono's per-request variables, typed once for every module. */
export interface AppEnv {
  Variables: {
    requestId: string;
    deps: Deps;
    /** The acting user's context; set by the auth middleware on authenticated routes. */
    ctx: Ctx;
    /** The raw request body, once read (see body.ts). */
    rawBody?: string;
  };
}
