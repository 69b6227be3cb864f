import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { DescFile } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createOpenApiDocument } from "../../src/openapi/openapi-document.js";
import { createMemoryPaymentIntentStore } from "../../src/store/memory/memory-payment-intent-store.js";
import { createRouteTable } from "../../src/protocols/rest/route-table.js";
import { createRestClient, expectJson, recordRestExchanges, type PaymentIntentJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { createOpenApiValidator } from "./support/openapi-validator.js";

const document = createOpenApiDocument({ basePath: "/v1", publicUrl: "https://pay.example.com" });
const validator = createOpenApiValidator(document);

// Recording starts before the REST suites below are loaded: every response
// their RestClients get is checked against the document as it arrives.
const failures: string[] = [];
const seen = new Map<string, Set<number>>();
const stopRecording = recordRestExchanges((exchange) => {
  const result = validator.check(exchange);
  if (result.operation) seen.set(result.operation, (seen.get(result.operation) ?? new Set()).add(result.status));
  for (const problem of result.problems) failures.push(`${exchange.method} ${exchange.url} → ${result.status}: ${problem}`);
});

/**
 * Every service of every generated file of this repository's protos but the
 * test helpers: the document describes the API a merchant integrates with,
 * and the helpers exist only in a sandbox (README, Testing your integration).
 */
async function protoServices() {
  const dir = new URL("../../gen/payments/v2/", import.meta.url);
  const services = [];
  for (const name of readdirSync(fileURLToPath(dir)).filter((n) => n.endsWith("_pb.ts"))) {
    const module = (await import(new URL(name, dir).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (typeof value === "object" && value !== null && (value as DescFile).kind === "file") {
        services.push(...(value as DescFile).services.filter((service) => service.typeName !== "payments.v2.TestHelperService"));
      }
    }
  }
  return services;
}

describe("the OpenAPI document", () => {
  it("describes exactly the routes of the google.api.http rules, each operation named after its RPC", async () => {
    const services = await protoServices();
    assert.ok(services.length >= 2, "the generated services were found");
    const routes = createRouteTable(services).routes.map((route) => `${route.httpMethod} ${route.path.template} ${route.method.name}`);
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );
    assert.deepEqual([...operations].sort(), [...routes].sort());
  });

  it("has an absolute server URL, PUBLIC_URL + BASE_PATH, and no jsonSchemaDialect", () => {
    assert.deepEqual(document.servers.map((server) => server.url), ["https://pay.example.com/v1"]);
    assert.equal(createOpenApiDocument({ basePath: "", publicUrl: "http://127.0.0.1:8080" }).servers[0]!.url, "http://127.0.0.1:8080");
    assert.equal("jsonSchemaDialect" in document, false);
  });

  it("documents the error shape for every status the API answers with", () => {
    for (const status of [400, 401, 403, 404, 409, 413, 415, 429, 500, 503]) {
      assert.ok(document.components.responses[`Error${status}`], `Error${status}`);
    }
    // 405 is the answer of no operation: only the extension describes it.
    assert.deepEqual(Object.keys(document["x-unrouted-responses"]), ["404", "405"]);
    const createOp = document.paths["/v2/payment-intents"]!.post!;
    assert.deepEqual(Object.keys(createOp.responses).sort(), ["200", "201", "400", "401", "403", "409", "413", "415", "429", "500", "503"]);
  });

  it("has examples of every request body and response, each valid against its schema", () => {
    const bodies: { where: string; schema: object; examples: Record<string, { value: unknown }> | undefined }[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const request = operation.requestBody?.content["application/json"];
        if (request) bodies.push({ where: `${method} ${path} request`, ...request });
        for (const [status, response] of Object.entries(operation.responses)) {
          const resolved = "$ref" in response ? document.components.responses[response.$ref.split("/").pop()!]! : response;
          bodies.push({ where: `${method} ${path} ${status}`, ...resolved.content!["application/json"]! });
        }
      }
    }
    for (const [status, response] of Object.entries(document["x-unrouted-responses"])) {
      bodies.push({ where: `unrouted ${status}`, ...response.content!["application/json"]! });
    }
    // 8 request bodies, 184 operation responses, 2 unrouted ones.
    assert.equal(bodies.length, 194);
    const problems: string[] = [];
    for (const { where, schema, examples } of bodies) {
      if (!examples || Object.keys(examples).length === 0) problems.push(`${where}: no examples`);
      for (const [name, example] of Object.entries(examples ?? {})) {
        for (const problem of validator.problemsOf(schema, example.value)) problems.push(`${where} example ${name}: ${problem}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it("gives parameter examples that are valid against the parameter's schema", () => {
    const problems: string[] = [];
    let examples = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of operation.parameters ?? []) {
          if ("$ref" in parameter || parameter.example === undefined) continue;
          examples++;
          for (const problem of validator.problemsOf(parameter.schema, parameter.example)) problems.push(`${method} ${path} ${parameter.name}: ${problem}`);
        }
      }
    }
    assert.ok(examples >= 10, `${examples} parameter examples`);
    assert.deepEqual(problems, []);
  });

  it("puts no angle-bracket placeholder in any prose, which Markdown renderers would swallow", () => {
    const found: string[] = [];
    const walk = (value: unknown, where: string) => {
      if (typeof value !== "object" || value === null) return;
      for (const [key, child] of Object.entries(value)) {
        if ((key === "description" || key === "summary" || key === "title") && typeof child === "string" && /[<>]/.test(child)) {
          found.push(`${where}/${key}: ${child}`);
        }
        walk(child, `${where}/${key}`);
      }
    };
    walk(document, "#");
    assert.deepEqual(found, []);
  });

  it("closes every object schema, so an extra or missing field is caught", () => {
    const open: string[] = [];
    const walk = (schema: unknown, where: string) => {
      if (typeof schema !== "object" || schema === null) return;
      const s = schema as Record<string, unknown>;
      if (s["type"] === "object" && s["properties"] && s["additionalProperties"] !== false) open.push(where);
      for (const [key, value] of Object.entries(s)) walk(value, `${where}/${key}`);
    };
    walk(document.components.schemas, "#/components/schemas");
    assert.deepEqual(open, []);
  });
});

describe("GET {BASE_PATH}/openapi.json", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ basePath: "/api" });
  });
  after(() => server.close());

  it("serves the document for the server's own PUBLIC_URL and base path, without a key", async () => {
    const res = await fetch(`${server.restUrl}/openapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    assert.match(res.headers.get("x-request-id") ?? "", /./);
    const served = (await res.json()) as unknown;
    assert.deepEqual(served, JSON.parse(JSON.stringify(createOpenApiDocument({ basePath: "/api", publicUrl: server.url }))));
    assert.equal((served as { servers: { url: string }[] }).servers[0]!.url, `${server.url}/api`);
    assert.equal((await fetch(`${server.url}/v1/openapi.json`)).status, 404);
  });

  it("answers other methods with 405", async () => {
    const res = await fetch(`${server.restUrl}/openapi.json`, { method: "POST" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
  });
});

// The REST suites themselves, loaded here with the recorder on: whatever they
// send, the responses they get must match the document.
const restSuites = new URL("../rest/", import.meta.url);
for (const name of readdirSync(fileURLToPath(restSuites)).filter((n) => n.endsWith(".test.ts")).sort()) {
  await import(new URL(name, restSuites).href);
}

describe("REST answers the suites do not provoke", () => {
  let server: TestServer;
  let client: RestClient;
  before(async () => {
    const store = createMemoryPaymentIntentStore();
    server = await startTestServer({
      intents: {
        ...store,
        async list(query) {
          if (query.clientReference === "outage") throw new ConnectError("the database is unavailable; retry later", Code.Unavailable);
          if (query.clientReference === "boom") throw new Error("relation does not exist");
          return store.list(query);
        },
      },
      // merchantB is always over its rate limit, the way the rate-limited verifier refuses.
      wrapVerifier: (verifier) => ({
        async verify(key) {
          const principal = await verifier.verify(key);
          if (principal?.merchantId === "merchantB") {
            throw new ConnectError("rate limit exceeded", Code.ResourceExhausted, { "retry-after": "2" });
          }
          return principal;
        },
      }),
    });
    client = createRestClient(server);
  });
  after(() => server.close());

  it("503, 500 and 429", async () => {
    assert.equal((await client.listIntents({ clientReference: "outage" })).status, 503);
    assert.equal((await client.listIntents({ clientReference: "boom" })).status, 500);
    for (const send of [() => client.listIntents({}, "merchantB"), () => client.createIntent({}, "merchantB"), () => client.listAccounts("merchantB")]) {
      assert.equal((await send()).status, 429);
    }
  });

  it("every route's success, 404, 405 and a replay", async () => {
    const account = expectJson<{ id: string }>(
      await client.createAccount({ accountName: "Ada Stores", accountNumber: "0123456789", bankName: "Test Bank", bankCode: "058" }),
      201,
    );
    const body = {
      amount: 50000,
      customerEmail: "ada@example.com",
      clientReference: "openapi-1",
      paymentMethod: ["card", { type: "ussd" }],
      callbackUrl: "https://shop.example.com/paid",
      settlementAccounts: [{ settlementAccountId: account.id, splitAmount: 1000 }],
    };
    const intent = expectJson<PaymentIntentJson>(await client.createIntent(body), 201);
    expectJson(await client.createIntent(body), 200);
    expectJson(await client.createIntent({ amount: 1, customerEmail: "b@example.com", clientReference: "openapi-2" }), 201);
    expectJson(await client.listIntents({ pageSize: "1" }), 200);
    expectJson(await client.getIntent(intent.id), 200);
    expectJson(await client.listAccounts(), 200);
    expectJson(await client.deleteIntent(intent.id), 200);
    assert.equal((await client.deleteIntent(intent.id)).status, 404);
    assert.equal((await client.request("PATCH", `/v2/payment-intents/${intent.id}`)).status, 405);
    assert.equal((await client.request("GET", "/v2/nothing-here")).status, 404);
  });
});

describe("every REST response recorded in this file", () => {
  before(() => stopRecording());

  it("matches the OpenAPI document: status listed for its operation, headers, body", () => {
    assert.ok(seen.size > 0, "responses were recorded");
    assert.deepEqual(failures, []);
  });

  it("covered every operation's success and every documented error status", () => {
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const statuses = seen.get(`${method.toUpperCase()} ${path}`) ?? new Set();
        const successes = Object.keys(operation.responses).filter((status) => status.startsWith("2"));
        for (const success of successes) assert.ok(statuses.has(Number(success)), `${method} ${path} ${success} was never seen`);
      }
    }
    const all = new Set([...seen.values()].flatMap((statuses) => [...statuses]));
    for (const status of [400, 401, 403, 404, 405, 409, 413, 415, 429, 500, 503]) assert.ok(all.has(status), `no ${status} was seen`);
  });
});
