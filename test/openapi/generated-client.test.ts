import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestEnv, request } from "../support/env";

/**
 * The served document through openapi-typescript, as a TypeScript user of the API would generate
 * their client: the generated types must compile strictly, name every operation, and type every
 * request body field (no `unknown`, which accepts anything: a Date where the API wants a timestamp
 * string, a number where it wants an email). The program below is written from the document, so an
 * operation added to the API is covered without editing this file.
 */

type Doc = {
  paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, unknown> } }>>;
};
const METHODS = ["get", "post", "put", "patch", "delete"];

let doc: Doc;
beforeAll(async () => {
  const env = await createTestEnv();
  doc = (await request(env.app, "GET", "/openapi.json")).body;
});

/** Compiles files strictly; returns the diagnostics as text (empty: it compiles). */
function compile(files: Record<string, string>): string[] {
  const dir = mkdtempSync(join(tmpdir(), "generated-client-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const program = ts.createProgram(
    Object.keys(files).map((name) => join(dir, name)),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: [],
    },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    if (!d.file) return ts.flattenDiagnosticMessageText(d.messageText, "\n");
    const line = d.file.getLineAndCharacterOfPosition(d.start ?? 0).line;
    const source = d.file.text.split("\n")[line]!.trim().slice(0, 160);
    return `${d.file.fileName.slice(dir.length + 1)}:${line + 1} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")} — ${source}`;
  });
}

/** The program: one type per operation (its path and method must exist) and the checks on its body. */
function programFor(document: Doc): string {
  const lines = [
    `import type { paths } from "./generated";`,
    // true when T, or anything inside it, is `unknown` (or `any`).
    `type HasUnknown<T> = unknown extends T ? true : T extends readonly (infer E)[] ? HasUnknown<E>`,
    `  : T extends object ? (true extends { [K in keyof T]-?: HasUnknown<T[K]> }[keyof T] ? true : false) : false;`,
    `type JsonBody<O> = O extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;`,
    `function typed<T extends false>(): void {}`,
  ];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      lines.push(`type ${op.operationId} = paths[${JSON.stringify(path)}][${JSON.stringify(method)}];`);
      if (op.requestBody?.content["application/json"]) lines.push(`typed<HasUnknown<JsonBody<${op.operationId}>>>();`);
    }
  }
  return lines.join("\n");
}

describe("a client generated from /openapi.json with openapi-typescript", () => {
  it("compiles strictly, names every operation, and types every request body field", async () => {
    const generated = astToString(await openapiTS(doc as never));
    const errors = compile({ "generated.ts": generated, "program.ts": programFor(doc) });
    expect(errors).toEqual([]);
  });

  it("types timestamps as strings: a Date where an issueDate goes does not compile", async () => {
    const generated = astToString(await openapiTS(doc as never));
    const program = [
      `import type { paths } from "./generated";`,
      `type CreateInvoice = NonNullable<paths["/invoices"]["post"]["requestBody"]>["content"]["application/json"];`,
      `export const ok: CreateInvoice = { clientId: 1, issueDate: "2026-11-22", dueDate: "2026-12-22T09:30:00Z" };`,
      `// @ts-expect-error a timestamp is a string in JSON, never a Date`,
      `export const wrong: CreateInvoice = { clientId: 1, issueDate: new Date() };`,
    ].join("\n");
    expect(compile({ "generated.ts": generated, "program.ts": program })).toEqual([]);
  });

  it("the check can fail: a body field typed unknown is reported", async () => {
    const broken = structuredClone(doc) as any; // a JSON document
    const body = broken.paths["/clients"].post.requestBody.content["application/json"];
    const schema = body.schema.$ref ? broken.components.schemas[body.schema.$ref.split("/").pop()] : body.schema;
    schema.properties.name = {};
    const errors = compile({ "generated.ts": astToString(await openapiTS(broken)), "program.ts": programFor(broken) });
    expect(errors.join("\n")).toMatch(/program\.ts/);
  });
});
