import * as v from "valibot";
import type { FieldError } from "@invoicing/core/errors";
import { validationProblem } from "./problems";

const OBJECT_TYPES = new Set(["object", "strict_object", "loose_object", "object_with_rest"]);

/** Validates with a valibot schema; every issue becomes an `errors[]` entry with its dot path. */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  // valibot's object schemas take an array for an object (typeof [] is "object"): `[]` would pass as `{}`.
  if (Array.isArray(input) && OBJECT_TYPES.has(schema.type)) {
    throw validationProblem([{ path: "", message: "must be a JSON object" }]);
  }
  const result = v.safeParse(schema, input, { abortEarly: false });
  if (result.success) return result.output;
  throw validationProblem(toFieldErrors(result.issues));
}

export function toFieldErrors(issues: readonly v.BaseIssue<unknown>[]): FieldError[] {
  return issues.map((issue) => ({ path: v.getDotPath(issue) ?? "", message: describe(issue) }));
}

function describe(issue: v.BaseIssue<unknown>): string {
  if (issue.kind === "schema" && issue.received === "undefined") return "is required";
  if (issue.type === "strict_object" || issue.type === "never") return "unknown or read-only field";
  return issue.message;
}
