import { problemStatus, type ProblemCode } from "../http/problems";
import { PROBLEM_TYPES } from "../schemas/problem-types";
import { rendererAssets } from "./renderer";

/**
 * GET /docs: the OpenAPI document rendered by Swagger UI (inlined, see renderer.ts), followed by
 * the problem types, each at the anchor `#problem-{code}` that problem+json `type` URIs point to.
 */

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

/** `code` spans in the descriptions (they are ours, but escaped all the same). */
const inlineMarkdown = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, "<code>$1</code>");

function problemTable(): string {
  const rows = (Object.keys(PROBLEM_TYPES) as ProblemCode[])
    .map((code) => ({ code, status: problemStatus(code) }))
    .sort((a, b) => a.status - b.status)
    .map(
      ({ code, status }) =>
        `<tr id="problem-${code}"><td>${status}</td><td><code>${code}</code></td><td>${inlineMarkdown(PROBLEM_TYPES[code])}</td></tr>`,
    )
    .join("\n");
  return `<section id="problem-types">
<h2>Problem types</h2>
<p>Every error is <code>application/problem+json</code> (RFC 9457): <code>{ type, title, status, detail, code }</code>,
plus <code>errors[]</code> (<code>{ path, message }</code>) for <code>validation_error</code>. Its <code>type</code> links here.</p>
<table><thead><tr><th>Status</th><th>Code</th><th>When</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</section>`;
}

const PAGE_STYLE = `
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b; }
.page-header, #problem-types { max-width: 1460px; margin: 0 auto; padding: 0 20px; }
.page-header { padding-top: 16px; }
.page-header p { margin: 4px 0 0; }
#problem-types { padding-bottom: 40px; }
#problem-types table { border-collapse: collapse; width: 100%; font-size: 14px; }
#problem-types th, #problem-types td { border-bottom: 1px solid #ddd; padding: 6px 8px; text-align: left; vertical-align: top; }
#problem-types tr:target { background: #fff6d5; }
.renderer-missing { padding: 12px 20px; background: #fff6d5; }
`;

/** Swagger UI, fetching the document next to this page; no calls elsewhere (validatorUrl off). */
const BOOT = `
window.addEventListener("load", function () {
  SwaggerUIBundle({
    url: "./openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    docExpansion: "list",
    onComplete: function () {
      document.body.setAttribute("data-rendered", "true");
      if (location.hash.indexOf("#problem-") === 0) {
        var target = document.getElementById(location.hash.slice(1));
        if (target) target.scrollIntoView();
      }
    }
  });
});`;

export function docsPage(): string {
  const assets = rendererAssets();
  const renderer = assets
    ? `<div id="swagger-ui"></div>
<script>${assets.script}</script>
<script>${BOOT}</script>`
    : `<p class="renderer-missing">The interactive renderer (swagger-ui-dist) is not installed in this deployment; the document itself is at <a href="./openapi.json">/openapi.json</a>.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Invoicing API</title>
${assets ? `<style>${assets.style}</style>` : ""}
<style>${PAGE_STYLE}</style>
</head>
<body>
<header class="page-header">
<p>The OpenAPI 3.1 document: <a href="./openapi.json">/openapi.json</a> · <a href="#problem-types">Problem types</a></p>
</header>
${renderer}
${problemTable()}
</body>
</html>`;
}
