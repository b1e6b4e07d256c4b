import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { expect } from "vitest";
import type { TestResponse } from "../support/env";

/**
 * Reading the OpenAPI document as a client would, for the tests of test/openapi: its operations,
 * and a check that a real response is one the document describes for that operation — its status
 * documented, its media type, its documented headers present and its body valid against the
 * documented schema (ajv, JSON Schema 2020-12: the dialect of OpenAPI 3.1).
 */

// ajv-formats is CommonJS; under ESM its function is the default export's default.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as typeof addFormatsModule;

export type Json = Record<string, any>; // the document is JSON

export interface DocOperation {
  operationId: string;
  method: string;
  path: string;
  operation: Json;
  public: boolean;
}

export const METHODS = ["get", "put", "post", "patch", "delete", "head", "options", "trace"];

export function operationsOf(doc: Json): DocOperation[] {
  const out: DocOperation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const security = (operation.security ?? doc.security) as unknown[];
      out.push({ operationId: operation.operationId, method, path, operation, public: security.length === 0 });
    }
  }
  return out;
}

/** `/invoices/{id}` and hono's `/invoices/:id` both as `/invoices/{}`. */
export const pathShape = (path: string) => path.replace(/\{[^}]+\}/g, "{}").replace(/:[A-Za-z0-9_]+/g, "{}");

const DOC_ID = "https://invoicing.test/openapi.json";
const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** Headers a documented response promises (the others are informational or conditional). */
const PROMISED_HEADERS = ["x-request-id", "location", "etag", "www-authenticate", "retry-after"];

export class Conformance {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  private validator(op: DocOperation, status: string, mediaType: string): ValidateFunction {
    const ref = `${DOC_ID}#/${pointer("paths", op.path, op.method, "responses", status, "content", mediaType, "schema")}`;
    let fn = this.compiled.get(ref);
    if (!fn) {
      fn = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, fn);
    }
    return fn;
  }

  /** Asserts that `res` is a response the document describes for `op`; returns its documented entry. */
  check(op: DocOperation, res: TestResponse, what = `${op.method.toUpperCase()} ${op.path}`): Json {
    const documented = op.operation.responses[String(res.status)] as Json | undefined;
    expect(
      documented,
      `${what} (${op.operationId}) answered ${res.status}, which the document does not list: ${res.text.slice(0, 300)}`,
    ).toBeDefined();
    const response = documented!;
    for (const [name] of Object.entries<Json>(response.headers ?? {})) {
      if (!PROMISED_HEADERS.includes(name.toLowerCase())) continue;
      expect(res.headers.get(name), `${what}: documented header ${name} missing on ${res.status}`).not.toBeNull();
    }
    const content = response.content as Json | undefined;
    if (!content) {
      expect(res.text, `${what}: ${res.status} is documented without a body`).toBe("");
      return response;
    }
    const contentType = res.headers.get("content-type") ?? "";
    const mediaType = Object.keys(content).find((m) => contentType.toLowerCase().startsWith(m));
    expect(
      mediaType,
      `${what}: content type ${contentType} is not one of ${Object.keys(content).join(", ")}`,
    ).toBeDefined();
    if (mediaType!.endsWith("json")) {
      const validate = this.validator(op, String(res.status), mediaType!);
      const valid = validate(res.body);
      expect(
        valid,
        `${what} → ${res.status}: body does not match the documented schema: ${this.ajv.errorsText(validate.errors, { separator: "\n" })}\n${res.text.slice(0, 500)}`,
      ).toBe(true);
    } else {
      expect(res.text.length, `${what}: empty ${mediaType} body`).toBeGreaterThan(0);
    }
    return response;
  }
}
