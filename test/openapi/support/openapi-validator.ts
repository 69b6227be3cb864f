import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule, { type FormatsPlugin } from "ajv-formats";
import type { HttpMethod, OpenApiDocument, Operation, Ref, Response } from "../../../src/openapi/openapi-document.js";
import type { RestExchange } from "../../support/rest-client.js";

// ajv-formats is CommonJS: its default export arrives wrapped under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? addFormatsModule) as FormatsPlugin;

const schemasId = "https://payments.invalid/openapi/schemas";

/** What a check decided about one exchange. */
export interface CheckResult {
  /** "<METHOD> <path template>" of the operation, "unrouted", or undefined when the URL is not the REST API's. */
  operation?: string;
  status: number;
  /** Empty when the response (and, for a success, the request) matches the document. */
  problems: string[];
}

/**
 * createOpenApiValidator checks real exchanges against the document: the
 * operation for the method and path must list the status; every required
 * header of that response must be present and every documented header must
 * match its schema; the body must be JSON of the response's schema. For a 2xx
 * answer the request body must match the request schema too, so a request
 * the service accepts cannot be one the document says is invalid.
 */
export function createOpenApiValidator(document: OpenApiDocument) {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
  addFormats(ajv);
  /** The document's refs point at #/components/…; make them absolute into one registered schema. */
  const rebase = <T>(value: T): T =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${schemasId}#/$defs/`)) as T;
  ajv.addSchema({ $id: schemasId, $defs: rebase(document.components.schemas) });
  const compiled = new Map<unknown, ValidateFunction>();
  const validator = (schema: object) => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(rebase(schema));
      compiled.set(schema, validate);
    }
    return validate;
  };
  const errorsOf = (validate: ValidateFunction) => ajv.errorsText(validate.errors, { separator: "; " });
  const resolve = <T>(value: T | Ref, kind: "responses" | "headers"): T =>
    "$ref" in (value as object)
      ? (document.components[kind] as Record<string, T>)[(value as Ref).$ref.split("/").pop()!]!
      : (value as T);

  const routes = Object.entries(document.paths).map(([template, item]) => ({
    template,
    item,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
  // The server URL is PUBLIC_URL + BASE_PATH; a test server's port is its own, so only the path is compared.
  const serverPath = new URL(document.servers[0]!.url).pathname;
  const basePath = serverPath === "/" ? "" : serverPath;

  function checkResponse(response: Response, exchange: RestExchange, problems: string[]): void {
    const { headers, text } = exchange.response;
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const { required, schema } = resolve(header, "headers");
      const value = headers.get(name);
      if (value === null) {
        if (required) problems.push(`missing header ${name}`);
        continue;
      }
      const validate = validator(schema);
      if (!validate(value)) problems.push(`header ${name}: ${JSON.stringify(value)} ${errorsOf(validate)}`);
    }
    const content = response.content?.["application/json"];
    if (!content) return;
    if (!/^application\/json(;|$)/.test(headers.get("content-type") ?? "")) problems.push(`content-type ${headers.get("content-type")}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push(`body is not JSON: ${text.slice(0, 200)}`);
      return;
    }
    const validate = validator(content.schema);
    if (!validate(body)) problems.push(`body: ${errorsOf(validate)}; body was ${text.slice(0, 300)}`);
  }

  function check(exchange: RestExchange): CheckResult {
    const { status } = exchange.response;
    const url = new URL(exchange.url);
    const root = new URL(exchange.restUrl);
    // Only the test servers with the document's BASE_PATH are described by it.
    if (url.origin !== root.origin || root.pathname.replace(/\/$/, "") !== basePath) return { status, problems: [] };
    if (basePath !== "" && !url.pathname.startsWith(`${basePath}/`)) return { status, problems: [] };
    const path = url.pathname.slice(basePath.length);
    const problems: string[] = [];
    const route = routes.find((r) => r.pattern.test(path));
    if (!route) {
      // Anything else under BASE_PATH that is not a 404 is a plain HTTP route (this document, the docs page).
      if (status !== 404) return { status, problems: [] };
      checkResponse(resolve<Response>(document["x-unrouted-responses"]["404"], "responses"), exchange, problems);
      return { operation: "unrouted", status, problems };
    }
    const operation: Operation | undefined = route.item[exchange.method.toLowerCase() as HttpMethod];
    if (!operation) {
      if (status !== 405) problems.push(`${exchange.method} ${route.template} is no operation, yet answered ${status}`);
      else checkResponse(resolve<Response>(document["x-unrouted-responses"]["405"], "responses"), exchange, problems);
      return { operation: "unrouted", status, problems };
    }
    const name = `${exchange.method.toUpperCase()} ${route.template}`;
    const documented = operation.responses[String(status)];
    if (!documented) return { operation: name, status, problems: [`status ${status} is not documented for ${name}`] };
    checkResponse(resolve(documented, "responses"), exchange, problems);
    const requestSchema = operation.requestBody?.content["application/json"]?.schema;
    if (status < 300 && requestSchema && exchange.requestBody) {
      const validate = validator(requestSchema);
      let body: unknown;
      try {
        body = JSON.parse(Buffer.from(exchange.requestBody).toString("utf8"));
      } catch {
        body = undefined;
      }
      if (!validate(body)) problems.push(`accepted a request the document refuses: ${errorsOf(validate)}`);
    }
    return { operation: name, status, problems };
  }

  /** The problems of value against a schema of the document (or one that refers into it); empty when it matches. */
  function problemsOf(schema: object, value: unknown): string[] {
    const validate = validator(schema);
    return validate(value) ? [] : [errorsOf(validate)];
  }

  return { check, problemsOf };
}
