import { STATUS_CODES } from "node:http";
import { generatedOpenApi } from "../../gen/rest/openapi.js";
import type { GeneratedOpenApi, GeneratedOperation } from "./generate-openapi.js";
import type { JsonSchema } from "./json-schema.js";
import { createOpenApiExamples, type Examples } from "./openapi-examples.js";
import { createApiOverlay, type ApiOverlay } from "./openapi-overlay.js";

/** Ref points into components (OpenAPI 3.1 §4.8.23). */
export interface Ref {
  $ref: string;
}

/** A query, path or header parameter of an operation. */
export interface Parameter {
  name: string;
  in: "query" | "path" | "header";
  required?: boolean;
  description: string;
  /** A name/value list spelt field[name]=value (OpenAPI 3.1 §4.8.12.4). */
  style?: "deepObject";
  explode?: boolean;
  schema: JsonSchema;
  /** What tools fill the parameter with (Postman, Swagger UI). */
  example?: unknown;
}

/** A body: its schema and examples of it. */
export interface MediaType {
  schema: JsonSchema;
  examples: Examples;
}

/** A response header. */
export interface Header {
  description: string;
  required?: boolean;
  schema: JsonSchema;
}

/** One response of an operation: headers and a JSON body. */
export interface Response {
  description: string;
  headers?: Record<string, Header | Ref>;
  content?: Record<string, MediaType>;
}

/** One route: a method on a path. */
export interface Operation {
  /** The RPC that serves the route (its google.api.http rule). */
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: (Parameter | Ref)[];
  requestBody?: { required: boolean; content: Record<string, MediaType> };
  responses: Record<string, Response | Ref>;
}

export type HttpMethod = "get" | "post" | "delete";
export type PathItem = Partial<Record<HttpMethod, Operation>>;

/** The part of an OpenAPI 3.1 document this service writes. */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: {
    title: string;
    version: string;
    description: string;
    contact: { name: string; url: string };
    license: { name: string; identifier: string };
  };
  servers: { url: string; description: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, Parameter>;
    headers: Record<string, Header>;
    responses: Record<string, Response>;
    securitySchemes: Record<string, Record<string, string>>;
  };
  /**
   * Answers that belong to no operation: a path no route matches (404) and a
   * route's path with a method it does not serve (405). OpenAPI describes
   * operations only, so these are named here for tools and the test.
   */
  "x-unrouted-responses": Record<"404" | "405", Response>;
}

export interface OpenApiDocumentOptions {
  /**
   * PUBLIC_URL: the origin clients reach the service at. With basePath it
   * makes the server URL absolute, as Postman, newman, generated clients and
   * Swagger UI's try-it-out need (a relative one resolves against wherever
   * the document was read from, or nothing).
   */
  publicUrl: string;
  /** Where the REST API is mounted (BASE_PATH). */
  basePath: string;
  /** The service's version, shown in info.version. */
  version?: string;
  /** What the proto says (paths, parameters, schemas): gen/rest/openapi.ts unless a test passes its own. */
  generated?: GeneratedOpenApi;
}

const json = (schema: JsonSchema, examples: Examples): Record<string, MediaType> => ({ "application/json": { schema, examples } });
const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string): Ref => ({ $ref: `#/components/headers/${name}` });
const responseRef = (name: string): Ref => ({ $ref: `#/components/responses/${name}` });
const parameterRef = (name: string): Ref => ({ $ref: `#/components/parameters/${name}` });

/** Every REST response carries these. */
const commonHeaders = { "X-Request-Id": headerRef("XRequestId"), "Cache-Control": headerRef("CacheControl") };

/** What each error status means across the API; operations list the ones they can answer. */
const errorMeanings: Record<number, string> = {
  400: "Invalid input: malformed JSON, an unknown or repeated field or query parameter, a bad value. The message names the field.",
  401: "Missing, malformed, unknown, revoked or expired API key.",
  403: "The API key may not do this: it lacks the operation's scope (the message names it), it is not accepted from the client's address (allowedCidrs), or it would make a key that may do more than itself.",
  404: "No such resource for this merchant (another merchant's and deleted intents included), or no route for the path.",
  405: "The path exists, the method does not; Allow lists the methods it has.",
  409: "Conflicts with stored state: a reused clientReference with a different request, an account registered twice, an intent that is no longer pending, a refund of an intent that is not successful or of more than is left.",
  413: "The body is larger than 64 KiB.",
  415: "The body is not application/json (charset, when given, must be utf-8).",
  429: "Too many requests for this API key; retry after Retry-After seconds.",
  500: "An unexpected failure; logged with the request id, never detailed to the client.",
  503: "The database is unavailable, or the instance is shutting down; retry later.",
};

/** Headers an error status adds to the common ones. */
const errorHeaders: Record<number, Record<string, Header | Ref>> = {
  401: { "WWW-Authenticate": headerRef("WWWAuthenticate") },
  // Inline: only the 405 of x-unrouted-responses has it, and linters count no reference from an extension.
  405: { Allow: { description: "The methods the path has.", required: true, schema: { type: "string", pattern: "^[A-Z]+(, [A-Z]+)*$" } } },
  429: { "Retry-After": headerRef("RetryAfter") },
  503: { "Retry-After": headerRef("RetryAfterOptional") },
};

/** errorResponse is the §7 body with status fixed to the code and title to its reason phrase. */
function errorResponse(status: number, examples: Examples): Response {
  return {
    description: errorMeanings[status]!,
    headers: { ...commonHeaders, ...errorHeaders[status] },
    content: json(
      {
        allOf: [
          schemaRef("Error"),
          { properties: { status: { const: status }, title: { const: STATUS_CODES[status] } } },
        ],
      },
      examples,
    ),
  };
}

/** The error statuses operations answer with; 405 is the answer of no operation. */
const operationErrors = [400, 401, 403, 404, 409, 413, 415, 429, 500, 503];
/** The error statuses every operation can answer: input, key, the key's scopes and networks, rate limit, failures. */
const everyOperation = [400, 401, 403, 429, 500, 503];
/** And those of operations with a JSON body. */
const withBody = [413, 415];

function errors(...statuses: number[]): Record<string, Ref> {
  return Object.fromEntries([...statuses].sort().map((status) => [String(status), responseRef(`Error${status}`)]));
}

/** The §7 body of every error answer: the REST error writer's (errorBody, src/http/http-status.ts), not a proto message. */
const errorSchema: JsonSchema = {
  type: "object",
  description: "Every non-2xx response (§7).",
  additionalProperties: false,
  required: ["status", "title", "message"],
  properties: {
    status: { type: "integer", minimum: 400, maximum: 599, description: "The HTTP status code." },
    title: { type: "string", minLength: 1, description: "The status's HTTP reason phrase." },
    message: { type: "string", minLength: 1, description: "What went wrong; names the field for validation errors; never internals." },
  },
};

/** operationOf is a generated operation with what the overlay says of it. */
function operationOf(generated: GeneratedOperation, overlay: ApiOverlay): Operation {
  const extra = overlay.operations[generated.operationId];
  if (!extra) throw new Error(`the OpenAPI overlay says nothing of ${generated.operationId}`);
  const examples = extra.requestExamples;
  const tag = overlay.tags[generated["x-service"]]!;
  const output = generated.responses["200"].content["application/json"].schema;
  const body = generated.requestBody?.content["application/json"].schema;
  if (body && !examples) throw new Error(`the OpenAPI overlay has no request example of ${generated.operationId}`);
  const successes = Object.entries(extra.success).map(([status, success]): [string, Response] => [
    status,
    {
      description: success.description,
      headers: { ...commonHeaders, ...Object.fromEntries(Object.entries(success.headers ?? {}).map(([name, component]) => [name, headerRef(component)])) },
      content: json(output, success.examples),
    },
  ]);
  return {
    operationId: generated.operationId,
    summary: extra.summary,
    description: [generated.description, extra.rest].filter(Boolean).join("\n\n"),
    tags: [tag.name],
    parameters: [
      parameterRef("XRequestId"),
      ...generated.parameters.map((parameter) => {
        const example = extra.parameterExamples?.[parameter.name];
        return { ...parameter, description: parameter.description ?? "", ...(example !== undefined && { example }) };
      }),
    ],
    ...(body && { requestBody: { required: true, content: json(body, examples!) } }),
    responses: { ...Object.fromEntries(successes), ...errors(...everyOperation, ...(body ? withBody : []), ...extra.errors) },
  };
}

/** The component schemas that refs reachable from root name, transitively: what the document's operations use. */
function reachable(schemas: Record<string, JsonSchema>, root: unknown): Record<string, JsonSchema> {
  const used = new Set<string>();
  const visit = (value: unknown) => {
    if (typeof value !== "object" || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string" && child.startsWith("#/components/schemas/")) {
        const name = child.slice("#/components/schemas/".length);
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else visit(child);
    }
  };
  visit(root);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
}

/**
 * createOpenApiDocument describes the REST API: what the proto says, generated
 * from it (gen/rest/openapi.ts: one operation per google.api.http rule, its
 * parameters, bodies and their schemas with every field rule), with what the
 * proto cannot say from the overlay (openapi-overlay.ts: titles, tags, 201 and
 * the headers of each answer, errors, examples) and the parts common to
 * every operation here (errors, headers, security). The test helpers' routes
 * are left out: they exist only in a sandbox. The test that validates real
 * responses against it keeps it honest.
 */
export function createOpenApiDocument(options: OpenApiDocumentOptions): OpenApiDocument {
  const { basePath, publicUrl } = options;
  const generated = options.generated ?? (generatedOpenApi as unknown as GeneratedOpenApi);
  const examples = createOpenApiExamples({ publicUrl, basePath });
  const overlay = createApiOverlay(examples);
  const services = Object.keys(overlay.tags);
  const paths: Record<string, PathItem> = {};
  // Service by service, in the overlay's order, as tools list them.
  for (const service of services) {
    for (const [path, item] of Object.entries(generated.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation["x-service"] !== service) continue;
        (paths[path] ??= {})[method as HttpMethod] = operationOf(operation, overlay);
      }
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Payment Intent API",
      version: options.version ?? "2",
      description: [
        "Merchants create payment intents (a request to collect an amount from a customer), hand the customer the intent's checkoutLink, and list or cancel their intents.",
        "Amounts are integers in kobo (50000 is NGN 500.00); responses render them as strings of digits.",
        "Every request needs `Authorization: Bearer {api key}` and is scoped to the key's merchant.",
        "Every response carries `X-Request-Id` (the request's own when it sent a sane one) and `Cache-Control: no-store`.",
        "Every non-2xx response is `{status, title, message}`.",
        "The same operations are served over gRPC, gRPC-Web and Connect (services payments.v2.PaymentIntentService, payments.v2.RefundService, payments.v2.SettlementAccountService, payments.v2.EventService, payments.v2.WebhookEndpointService and payments.v2.ApiKeyService); EventService.StreamEvents, a server stream, is served there only.",
      ].join("\n\n"),
      contact: { name: "Payment Intent API documentation", url: `${publicUrl}${basePath}/docs` },
      // SPDX names a license outside its list LicenseRef-…: the API is not open source.
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    // No jsonSchemaDialect: 3.1's default dialect is what the schemas use, and
    // naming it anyway makes Stoplight Prism skip validating bodies.
    servers: [{ url: `${publicUrl}${basePath}`, description: "This service (PUBLIC_URL + BASE_PATH)." }],
    security: [{ apiKey: [] }],
    tags: Object.values(overlay.tags),
    paths,
    components: {
      schemas: { ...reachable(generated.components.schemas, paths), Error: errorSchema },
      parameters: {
        XRequestId: {
          name: "X-Request-Id",
          in: "header",
          description: "Your id for this request, echoed in the response and the service's log; replaced by a generated one unless it is 1–128 of A-Z a-z 0-9 . _ : -.",
          schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
        },
      },
      headers: {
        XRequestId: {
          description: "The request id: the one sent when sane, else generated.",
          required: true,
          schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
        },
        CacheControl: { description: "API responses are never cached.", required: true, schema: { type: "string", const: "no-store" } },
        Location: {
          description: "Where the created intent can be read: {BASE_PATH}/v2/payment-intents/{id}.",
          required: true,
          schema: { type: "string", pattern: "^(/[A-Za-z0-9._~-]+)*/v2/payment-intents/pi_(?:test_|live_)?[0-9a-f-]{36}$" },
        },
        RefundLocation: {
          description: "Where the created refund can be read: {BASE_PATH}/v2/refunds/{id}.",
          required: true,
          schema: { type: "string", pattern: "^(/[A-Za-z0-9._~-]+)*/v2/refunds/rf_(?:test_|live_)?[0-9a-f-]{36}$" },
        },
        IdempotentReplayed: { description: "Marks an idempotent replay.", required: true, schema: { type: "string", const: "true" } },
        Link: {
          description: 'Present when another page exists: the next page\'s URL in angle brackets, then ; rel="next" (RFC 8288).',
          schema: { type: "string", pattern: '^<[^>]+>; rel="next"$' },
        },
        WWWAuthenticate: { description: "The scheme to authenticate with (RFC 6750).", required: true, schema: { type: "string", pattern: "^Bearer" } },
        RetryAfter: { description: "Seconds to wait before retrying.", required: true, schema: { type: "string", pattern: "^[0-9]+$" } },
        RetryAfterOptional: { description: "Seconds to wait before retrying, when known.", schema: { type: "string", pattern: "^[0-9]+$" } },
      },
      // 405 belongs to no operation: it is described under x-unrouted-responses only.
      responses: Object.fromEntries(
        operationErrors.map((status) => [`Error${status}`, errorResponse(status, examples.errors[status]!)]),
      ),
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "The merchant's API key, sent as `Authorization: Bearer {api key}`." },
      },
    },
    "x-unrouted-responses": { "404": errorResponse(404, examples.errors[404]!), "405": errorResponse(405, examples.errors[405]!) },
  };
}
