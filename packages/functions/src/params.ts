import type { Context } from "hono";
import * as v from "valibot";
import type { AppEnv } from "./env";
import { pathId } from "./schemas/common";
import { readJson } from "./body";
import { validationProblem } from "./problems";
import { validate } from "./validation";

/** The `:id` path parameter as a positive integer, else 400 validation_error on path "id". */
export function idParam(c: Context<AppEnv>, name = "id"): number {
  const result = v.safeParse(pathId, c.req.param(name));
  if (result.success) return result.output;
  throw validationProblem([{ path: name, message: "must be a positive integer" }]);
}

/** If-Match header value, if any. */
export const ifMatch = (c: Context<AppEnv>): string | undefined => c.req.header("if-match");

/**
 * The path id and the validated JSON body of a request, checked in API.md's order: the body's
 * 413 → 415 → malformed_json first, then 400 for a bad path id, then the body's own 400.
 * `optional`: an action endpoint, where an empty body reads as `{}`.
 */
export async function idAndBody<S extends v.GenericSchema>(
  c: Context<AppEnv>,
  schema: S,
  options: { optional?: boolean } = {},
): Promise<{ id: number; body: v.InferOutput<S> }> {
  const raw = await readJson(c, options);
  const id = idParam(c);
  return { id, body: validate(schema, raw) };
}
