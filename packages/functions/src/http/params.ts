import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "./app-env";
import { validationProblem } from "./problems";
import { pathId } from "../schemas/common";

/** Path parameters that hold a record's id (`:id`, `:deliveryId`): positive integers. */
export const isIdParam = (name: string): boolean => name === "id" || /^[a-z]\w*Id$/.test(name);

/** The `:id` path parameter as a positive integer, else 400 validation_error on path "id". */
export function idParam(c: Context<AppEnv>, name = "id"): number {
  const result = v.safeParse(pathId, c.req.param(name));
  if (result.success) return result.output;
  throw validationProblem([{ path: name, message: "must be a positive integer" }]);
}

/** Every id path parameter of the route is a positive integer, else 400 (the first bad one). */
export function checkPathIds(c: Context<AppEnv>): void {
  for (const name of Object.keys(c.req.param() as Record<string, string>)) if (isIdParam(name)) idParam(c, name);
}
