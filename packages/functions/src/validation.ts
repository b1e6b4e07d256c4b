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
  const errors: FieldError[] = [];
  const arraysAt = new Set<string>();
  for (const issue of issues) {
    const arrayAt = arrayForObject(issue);
    if (arrayAt === undefined) errors.push({ path: v.getDotPath(issue) ?? "", message: describe(issue) });
    else if (!arraysAt.has(arrayAt)) {
      arraysAt.add(arrayAt);
      errors.push({ path: arrayAt, message: OBJECT_EXPECTED });
    }
  }
  return errors;
}

const OBJECT_EXPECTED = "expected an object";

/**
 * The path of an array given where an object belongs, if the issue comes from one. valibot's object
 * schemas take an array for an object too (see validate), so `"address": ["x"]` gives an unknown
 * field `address.0` and a missing `address.country`: one mistake, reported once at `address`.
 */
function arrayForObject(issue: v.BaseIssue<unknown>): string | undefined {
  const path = issue.path ?? [];
  const at = path.findIndex((item) => item.type === "object" && Array.isArray(item.input));
  return at < 0
    ? undefined
    : path
        .slice(0, at)
        .map((item) => String(item.key))
        .join(".");
}

function describe(issue: v.BaseIssue<unknown>): string {
  // A value of another type where an object belongs (not one of its keys: those expect `never`).
  if (OBJECT_TYPES.has(issue.type) && issue.expected === "Object" && issue.received !== "undefined")
    return OBJECT_EXPECTED;
  if (issue.kind === "schema" && issue.received === "undefined") return "is required";
  if (issue.type === "strict_object" || issue.type === "never") return "unknown or read-only field";
  return issue.message;
}
