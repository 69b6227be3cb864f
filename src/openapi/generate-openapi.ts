import type { DescExtension, DescService } from "@bufbuild/protobuf";
import { isEntryList } from "../protocols/rest/entry-list.js";
import { readHttpBindings } from "../protocols/rest/http-bindings.js";
import type { RuleReader } from "../rules/rule-reader.js";
import type { JsonSchema } from "./json-schema.js";
import { createProtoSchemas, type Describe, type RestSpelling } from "./proto-schemas.js";

/** An operation as the proto says it: the overlay (openapi-overlay.ts) adds what the proto cannot say. */
export interface GeneratedOperation {
  operationId: string;
  /** The full name of the RPC's service, for the overlay's tags and the sandbox's exclusion. */
  "x-service": string;
  description?: string;
  parameters: GeneratedParameter[];
  requestBody?: { required: true; content: { "application/json": { schema: JsonSchema } } };
  responses: { "200": { description: string; content: { "application/json": { schema: JsonSchema } } } };
}

export interface GeneratedParameter {
  name: string;
  in: "path" | "query";
  required?: true;
  description?: string;
  /** A name/value list: field[name]=value, one parameter per entry. */
  style?: "deepObject";
  explode?: true;
  schema: JsonSchema;
}

/** The part of the OpenAPI document the proto says: routes, parameters, bodies and their schemas. */
export interface GeneratedOpenApi {
  paths: Record<string, Record<string, GeneratedOperation>>;
  components: { schemas: Record<string, JsonSchema> };
}

export interface GenerateOpenApiOptions {
  /** The services whose google.api.http routes are described. */
  services: readonly DescService[];
  /** The google.api.http extension (see readHttpBindings). */
  httpExtension: DescExtension;
  rules: RuleReader;
  describe: Describe;
  /** REST spellings the proto type cannot say, by full field name. */
  spellings?: ReadonlyMap<string, RestSpelling>;
}

/**
 * generateOpenApi describes the REST routes of the services from their
 * descriptors alone: one operation per google.api.http rule, named after its
 * RPC; path variables as the template spells them and (for routes without a
 * body) the request's other scalar fields as parameters, by JSON name (a
 * name/value list as one deepObject parameter); the body and the answer as
 * schemas of their messages (proto-schemas.ts), with the field rules as
 * keywords and the proto comments as descriptions. `npm run generate` runs
 * it (scripts/protoc-gen-rest) into gen/rest/; a test runs it on altered
 * descriptors to show that one option changes everything derived from it.
 */
export function generateOpenApi(options: GenerateOpenApiOptions): GeneratedOpenApi {
  const schemas = createProtoSchemas({ rules: options.rules, describe: options.describe, spellings: options.spellings });
  const paths: GeneratedOpenApi["paths"] = {};
  for (const binding of readHttpBindings(options.services, options.httpExtension)) {
    const { method, path } = binding;
    const field = (name: string) => method.input.fields.find((f) => f.name === name)!;
    // A path variable keeps the template's own spelling (OpenAPI matches the two by name).
    const parameters: GeneratedParameter[] = path.variables.map((name) => ({
      name,
      in: "path" as const,
      required: true as const,
      ...described(options.describe(field(name))),
      // A path segment is never empty.
      schema: { type: "string", minLength: 1 },
    }));
    if (binding.body === "") {
      for (const query of method.input.fields) {
        if (path.variables.includes(query.name)) continue;
        if (isEntryList(query)) {
          const entries = { style: "deepObject" as const, explode: true as const, schema: schemas.entries(query) };
          parameters.push({ name: query.jsonName, in: "query", ...described(options.describe(query)), ...entries });
          continue;
        }
        // The REST gateway takes singular scalars from the query (src/protocols/rest/decode-query.ts).
        if (query.fieldKind !== "scalar" || query.oneof) throw new Error(`${method.name}: ${query.name} cannot be a query parameter`);
        parameters.push({ name: query.jsonName, in: "query", ...described(options.describe(query)), schema: schemas.parameter(query) });
      }
    }
    const operation: GeneratedOperation = {
      operationId: method.name,
      "x-service": binding.service.typeName,
      ...described(options.describe(method)),
      parameters,
      ...(binding.body === "*" && {
        requestBody: { required: true as const, content: { "application/json": { schema: schemas.input(method.input, path.variables) } } },
      }),
      responses: {
        "200": { description: options.describe(method.output) ?? "OK", content: { "application/json": { schema: schemas.output(method.output) } } },
      },
    };
    (paths[path.template] ??= {})[binding.httpMethod.toLowerCase()] = operation;
  }
  return { paths, components: { schemas: sortKeys(schemas.components) } };
}

function described(text: string | undefined): { description?: string } {
  return text ? { description: text } : {};
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
