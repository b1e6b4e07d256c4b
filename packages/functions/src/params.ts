import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "./env";
import { pathId } from "./schemas/common";
import { validationProblem } from "./problems";

/** The `:id` path parameter as a positive integer, else 400 validation_error on path "id". */
export function idParam(c: Context<AppEnv>, name = "id"): number {
  const result = v.safeParse(pathId, c.req.param(name));
  if (result.success) return result.output;
  throw validationProblem([{ path: name, message: "must be a positive integer" }]);
}

/** If-Match header value, if any. */
export const ifMatch = (c: Context<AppEnv>): string | undefined => c.req.header("if-match");
