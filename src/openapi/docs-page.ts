import { createHash } from "node:crypto";
import type { JsonSchema } from "./openapi-schemas.js";
import type { Header, HttpMethod, OpenApiDocument, Operation, Parameter, Ref, Response } from "./openapi-document.js";

/** DocsPage is the rendered page and the Content-Security-Policy that lets exactly its stylesheet run. */
export interface DocsPage {
  html: string;
  contentSecurityPolicy: string;
}

const style = `
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem 1.5rem;color:#1d1d1f}
h1{margin-bottom:.2rem}h2{margin-top:2.5rem;border-top:1px solid #ddd;padding-top:1rem}h3{margin-top:1.5rem}
code{font:13px/1.4 ui-monospace,monospace;background:#f4f4f6;padding:.05rem .3rem;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{text-align:left;vertical-align:top;border-bottom:1px solid #e6e6e6;padding:.3rem .5rem}
th{font-weight:600;background:#fafafa}.method{font-weight:700;text-transform:uppercase;margin-right:.4rem}
.get{color:#0a6}.post{color:#06c}.delete{color:#c22}nav ul{columns:2}td table{margin:0}.muted{color:#666}
`.trim();

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
/** Backticks in the document's prose become <code>. */
const prose = (text: string) =>
  text
    .split("\n\n")
    .map((paragraph) => `<p>${escapeHtml(paragraph).replace(/`([^`]+)`/g, "<code>$1</code>")}</p>`)
    .join("\n");
const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);
const isRef = (value: unknown): value is Ref => typeof value === "object" && value !== null && "$ref" in value;

/**
 * renderDocsPage renders the OpenAPI document as one self-contained HTML page:
 * every operation with its parameters, body, responses and headers, then
 * every schema. It is server-rendered from the same document object the JSON
 * endpoint serves, so the two cannot disagree, and needs nothing from the
 * network (no Swagger UI, no CDN): no script at all, one inline stylesheet
 * allowed by its hash.
 */
export function renderDocsPage(document: OpenApiDocument): DocsPage {
  const { components } = document;
  const resolve = <T>(value: T | Ref, kind: "parameters" | "headers" | "responses"): T =>
    isRef(value) ? (components[kind] as Record<string, T>)[refName(value.$ref)]! : value;
  const base = document.servers[0]?.url === "/" ? "" : (document.servers[0]?.url ?? "");

  /** A one-line description of a schema, with links to named schemas and nested tables for inline objects. */
  function describe(schema: JsonSchema): string {
    if (typeof schema["$ref"] === "string") {
      const name = refName(schema["$ref"]);
      return `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`;
    }
    for (const keyword of ["anyOf", "oneOf", "allOf"] as const) {
      const options = schema[keyword] as JsonSchema[] | undefined;
      if (options) return options.map(describe).join(keyword === "allOf" ? " and " : " or ");
    }
    const notes: string[] = [];
    if (schema["const"] !== undefined) notes.push(`always ${code(JSON.stringify(schema["const"]))}`);
    if (Array.isArray(schema["enum"])) notes.push(`one of ${(schema["enum"] as unknown[]).map((v) => code(String(v))).join(", ")}`);
    if (typeof schema["format"] === "string") notes.push(`format ${code(schema["format"])}`);
    if (typeof schema["pattern"] === "string") notes.push(`pattern ${code(schema["pattern"])}`);
    for (const [keyword, label] of [
      ["minimum", "≥"],
      ["maximum", "≤"],
      ["minLength", "length ≥"],
      ["maxLength", "length ≤"],
      ["minItems", "items ≥"],
      ["maxItems", "items ≤"],
    ] as const) {
      if (typeof schema[keyword] === "number") notes.push(`${label} ${schema[keyword]}`);
    }
    if (schema["default"] !== undefined) notes.push(`default ${code(JSON.stringify(schema["default"]))}`);
    const type = typeof schema["type"] === "string" ? schema["type"] : "value";
    let text = escapeHtml(type);
    if (type === "array" && schema["items"]) text = `array of ${describe(schema["items"] as JsonSchema)}`;
    if (type === "object" && schema["properties"]) text = `object${propertiesTable(schema)}`;
    if (typeof schema["description"] === "string") notes.push(escapeHtml(schema["description"]));
    return notes.length > 0 ? `${text} <span class="muted">(${notes.join("; ")})</span>` : text;
  }

  function propertiesTable(schema: JsonSchema): string {
    const required = new Set((schema["required"] as string[] | undefined) ?? []);
    const rows = Object.entries((schema["properties"] as Record<string, JsonSchema>) ?? {}).map(
      ([name, property]) => `<tr><td>${code(name)}</td><td>${required.has(name) ? "yes" : "no"}</td><td>${describe(property)}</td></tr>`,
    );
    const closed = schema["additionalProperties"] === false ? '<p class="muted">No other fields are allowed.</p>' : "";
    return `<table><tr><th>Field</th><th>Required</th><th>Type</th></tr>${rows.join("")}</table>${closed}`;
  }

  function parametersSection(parameters: (Parameter | Ref)[]): string {
    if (parameters.length === 0) return "";
    const rows = parameters
      .map((p) => resolve(p, "parameters"))
      .map(
        (p) =>
          `<tr><td>${code(p.name)}</td><td>${p.in}</td><td>${p.required ? "yes" : "no"}</td><td>${describe(p.schema)}</td><td>${escapeHtml(p.description)}</td></tr>`,
      );
    return `<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Required</th><th>Type</th><th>Meaning</th></tr>${rows.join("")}</table>`;
  }

  function headersList(headers: Record<string, Header | Ref> | undefined): string {
    return Object.entries(headers ?? {})
      .map(([name, header]) => {
        const h = resolve(header, "headers");
        return `${code(name)}${h.required ? "" : " (when applicable)"}`;
      })
      .join(", ");
  }

  function responsesSection(responses: Record<string, Response | Ref>): string {
    const rows = Object.entries(responses).map(([status, response]) => {
      const r = resolve(response, "responses");
      const schema = r.content?.["application/json"]?.schema;
      return `<tr><td>${escapeHtml(status)}</td><td>${escapeHtml(r.description)}</td><td>${headersList(r.headers)}</td><td>${schema ? describe(schema) : ""}</td></tr>`;
    });
    return `<h4>Responses</h4><table><tr><th>Status</th><th>Meaning</th><th>Headers</th><th>Body</th></tr>${rows.join("")}</table>`;
  }

  const operations: { path: string; method: HttpMethod; operation: Operation }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ["get", "post", "delete"] as const) {
      const operation = item[method];
      if (operation) operations.push({ path, method, operation });
    }
  }

  const body = [
    `<header><h1>${escapeHtml(document.info.title)}</h1>`,
    `<p class="muted">Version ${escapeHtml(document.info.version)} · OpenAPI ${document.openapi} · <a href="openapi.json">openapi.json</a></p></header>`,
    prose(document.info.description),
    `<nav><h2>Operations</h2><ul>${operations
      .map(
        ({ path, method, operation }) =>
          `<li><a href="#op-${escapeHtml(operation.operationId)}"><span class="method ${method}">${method}</span>${escapeHtml(base + path)}</a></li>`,
      )
      .join("")}</ul></nav>`,
    ...operations.map(
      ({ path, method, operation }) => `<section id="op-${escapeHtml(operation.operationId)}">
<h2><span class="method ${method}">${method}</span>${code(base + path)}</h2>
<p><strong>${escapeHtml(operation.summary)}</strong> <span class="muted">(RPC ${escapeHtml(operation.operationId)})</span></p>
${prose(operation.description)}
${parametersSection(operation.parameters ?? [])}
${operation.requestBody ? `<h4>Request body</h4><p>${code("application/json")}: ${describe(operation.requestBody.content["application/json"]!.schema)}</p>` : ""}
${responsesSection(operation.responses)}
</section>`,
    ),
    `<section><h2>Any other path or method</h2>${responsesSection(document["x-unrouted-responses"])}</section>`,
    `<section><h2>Schemas</h2>${Object.entries(components.schemas)
      .map(([name, schema]) => `<section id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3><p>${describe(schema)}</p></section>`)
      .join("\n")}</section>`,
  ].join("\n");

  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(document.info.title)}</title>
<style>${style}</style>
</head>
<body>
${body}
</body>
</html>
`;
  const styleHash = createHash("sha256").update(style).digest("base64");
  return {
    html,
    contentSecurityPolicy: `default-src 'none'; style-src 'sha256-${styleHash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  };
}
