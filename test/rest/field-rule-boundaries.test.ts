import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fromJson, type DescField, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { EventService } from "../../gen/payments/v2/events_pb.js";
import { PaymentIntentService } from "../../gen/payments/v2/payment_intent_pb.js";
import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import { WebhookEndpointService } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import type { StringRules } from "../../gen/payments/rules/v1/rules_pb.js";
import { createOpenApiDocument, type Parameter } from "../../src/openapi/openapi-document.js";
import { createRouteTable } from "../../src/protocols/rest/route-table.js";
import { createContractRuleReader } from "../../src/rules/contract-rules.js";
import { formats } from "../../src/rules/formats.js";
import { messageOf, phraseOf } from "../../src/rules/phrase.js";
import type { ValueRules } from "../../src/rules/rule-reader.js";
import { createOpenApiValidator } from "../openapi/support/openapi-validator.js";
import { createRestClient, expectJson, type RestClient } from "../support/rest-client.js";
import { startTestServer, testStoreKind, type TestServer } from "../support/test-server.js";

/**
 * The boundary table (issue 18): for every field rule of every request of the
 * merchant REST API, walked from the descriptors, the values at each bound and
 * one past it, empty, too long and of the wrong format go over REST and over
 * Connect; both must answer as the rule says (the same 400 message, or not a
 * 400), and the OpenAPI document must accept exactly what the server accepts.
 * Fixtures only supply what no rule says: a valid request to start from, and
 * pools of list items the stores and the catalogue know.
 */

const services: DescService[] = [PaymentIntentService, SettlementAccountService, EventService, WebhookEndpointService];
const rules = createContractRuleReader();
const document = createOpenApiDocument({ basePath: "/v1", publicUrl: "http://127.0.0.1" });
const validator = createOpenApiValidator(document);

/** A processor name of the most characters a name may have, so "at the bound" is a known method. */
const longestName = "p".repeat(32);
const processors = [longestName, "proc_a", "proc_b", "proc_c", "proc_d", "proc_e", "proc_f"];
const eventTypes = ["payment_intent.created", "payment_intent.succeeded", "payment_intent.payment_failed", "payment_intent.failed", "payment_intent.expired", "payment_intent.cancelled"];

/** What the rules say of one value: accepted, or refused with this message. */
type Verdict = { accepted: true } | { accepted: false; message: string };

interface Case {
  label: string;
  /** The request as REST JSON: the body, or the query and path fields. */
  json: Record<string, unknown>;
  rest: Verdict;
  /** Over Connect; the same as rest unless proto3 cannot say what REST JSON can ([] given). */
  rpc: Verdict;
}

/** Fixtures: valid requests to start from, and list pools, made once the stores have accounts and an endpoint. */
interface Fixtures {
  base: Record<string, Record<string, unknown>>;
  /** Items for each list field, by JSON path without index: as many as its max_items, and one more. */
  pools: Record<string, unknown[]>;
}

function emailOfLength(length: number): string {
  const local = "a".repeat(64);
  const labels: string[] = [];
  let room = length - local.length - 1 - ".com".length;
  while (room > 0) {
    const label = Math.min(63, labels.length === 0 ? room : room - 1);
    labels.push("b".repeat(label));
    room -= label + (labels.length > 1 ? 1 : 0);
  }
  return `${local}@${labels.join(".")}.com`;
}

/** A value of n characters that every rule but the length takes, grown from (or cut to) the base's shape. */
function sized(rules: StringRules, base: string, n: number): string {
  switch (rules.wellKnown.case) {
    case "email":
      return emailOfLength(n);
    case "httpUrl":
      return `https://shop.example.com/${"p".repeat(n - 25)}`;
    case "text":
      return "T".repeat(n);
    default:
      return n <= base.length ? base.slice(0, n) : base + base.at(-1)!.repeat(n - base.length);
  }
}

/** A value of the base's length that its format or pattern refuses. */
function misshapen(rules: StringRules, base: string): string {
  switch (rules.wellKnown.case) {
    case "email":
      return "ada.example.com";
    case "httpUrl":
      return "ftp://shop.example.com/";
    case "text":
      return "T\u0007T";
  }
  const pattern = new RegExp(rules.pattern!, "u");
  const odd = [" ", "/", "A", "a", "0", "é"].map((c) => base.slice(0, -1) + c).find((value) => !pattern.test(value));
  assert.ok(odd !== undefined, `no misshapen value for ${rules.pattern}`);
  return odd;
}

/**
 * casesOf walks a message's field rules from the descriptors: each rule gives
 * its boundary values, with the verdict and message the rules themselves say.
 */
function casesOf(message: DescMessage, base: Record<string, unknown>, pools: Fixtures["pools"], prefix = ""): Case[] {
  const cases: Case[] = [];
  for (const field of message.fields) {
    const path = `${prefix}${field.jsonName}`;
    const value = rules.rulesOf(field);
    const put = (label: string, v: unknown, rest: Verdict, rpc: Verdict = rest): Case => {
      const json = structuredClone(base);
      if (v === undefined) delete json[field.jsonName];
      else json[field.jsonName] = v;
      return { label: `${path}: ${label}`, json, rest, rpc };
    };
    if (field.fieldKind === "list" && field.listKind === "message") {
      const items = (base[field.jsonName] as Record<string, unknown>[]) ?? [];
      assert.ok(items.length > 0, `the base request of ${message.name} has no ${path} item to vary`);
      for (const item of casesOf(field.message, items[0]!, pools, `${path}[0].`)) {
        cases.push({ ...item, json: { ...base, [field.jsonName]: [item.json, ...items.slice(1)] } });
      }
    }
    if (!value) continue;
    cases.push(...valueCases(field, value, path, base[field.jsonName], pools[path]).map(([label, v, rest, rpc]) => put(label, v, rest, rpc)));
  }
  return cases;
}

type ValueCase = [label: string, value: unknown, rest: Verdict, rpc?: Verdict];

function valueCases(field: DescField, value: ValueRules, path: string, base: unknown, pool: unknown[] | undefined): ValueCase[] {
  const where = `${field.parent.typeName}.${field.name}`;
  const accepted: Verdict = { accepted: true };
  const refused = (message: string): Verdict => ({ accepted: false, message });
  const type = value.type;
  const out: ValueCase[] = [];
  if (value.required) out.push(["absent", undefined, refused(`${path} is required`)]);
  if (!type) return out;
  const phrase = refused(messageOf(path, phraseOf(value, where)));
  switch (type.kind) {
    case "int32":
    case "int64": {
      const { gte, lte } = type.rules;
      if (gte !== undefined) out.push([`${gte}, the least`, Number(gte), accepted], [`${Number(gte) - 1}, one under`, Number(gte) - 1, phrase]);
      if (lte !== undefined) out.push([`${lte}, the most`, Number(lte), accepted], [`${Number(lte) + 1}, one over`, Number(lte) + 1, phrase]);
      if (type.rules.default !== undefined) out.push(["absent: the default", undefined, accepted]);
      return out;
    }
    case "string": {
      const r = type.rules;
      const from = typeof base === "string" && base !== "" ? base : (r.in[0] ?? "x");
      if (r.in.length > 0) out.push([`${r.in.at(-1)}, in the set`, r.in.at(-1), accepted], ["a value outside the set", "x-outside", phrase]);
      const min = r.len ?? r.minLen;
      const max = r.len ?? r.maxLen;
      if (min !== undefined && min > 1n) out.push([`${min} characters, the fewest`, sized(r, from, Number(min)), accepted], [`${min - 1n} characters, one under`, sized(r, from, Number(min) - 1), phrase]);
      if (min === 1n) out.push(["1 character, the fewest", sized(r, from, 1), accepted]);
      if (max !== undefined) out.push([`${max} characters, the most`, sized(r, from, Number(max)), accepted], [`${max + 1n} characters, one over`, sized(r, from, Number(max) + 1), phrase]);
      if (r.pattern !== undefined || r.wellKnown.case !== undefined) out.push(["the wrong format", misshapen(r, from), phrase]);
      const emptyRefused = r.in.length > 0 || (min ?? 0n) > 0n || r.pattern !== undefined || (r.wellKnown.case !== undefined && !new RegExp(formats[r.wellKnown.case].pattern(r), "u").test(""));
      if (r.default !== undefined) out.push(["empty: the default", "", accepted]);
      else if (value.ignoreZero) out.push(["empty: not given", "", accepted]);
      else if (!value.required && emptyRefused) out.push(["empty", "", phrase]);
      return out;
    }
    case "repeated": {
      const r = type.rules;
      const list = base as unknown[] | undefined;
      if (r.maxItems !== undefined) {
        assert.ok(pool && pool.length > Number(r.maxItems), `no pool of ${Number(r.maxItems) + 1} items for ${path}`);
        out.push([`${r.maxItems} items, the most`, pool.slice(0, Number(r.maxItems)), accepted], [`${r.maxItems + 1n} items, one over`, pool.slice(0, Number(r.maxItems) + 1), phrase]);
      }
      // REST JSON can say "given, and empty", which proto3 cannot: the REST gateway refuses it (payment-method-adapter.ts).
      if (r.minItems !== undefined && value.ignoreZero) out.push(["[]", [], refused(`${path} must not be empty; omit it to allow every enabled method`), accepted]);
      const first = list?.[0] ?? pool?.[0];
      if (r.unique) out.push(["an item twice", [first, first], refused(`${path}[1]: "${String(first)}" is listed twice`)]);
      if (type.items) {
        for (const [label, item, rest, rpc] of valueCases(field, type.items, `${path}[0]`, first, undefined)) {
          if (item !== undefined) out.push([`[0] ${label}`, [item], rest, rpc]);
        }
      }
      return out;
    }
  }
}

/** The merchant REST routes whose request has field rules, with their document operation. */
function routesWithRules() {
  const hasRules = (message: DescMessage): boolean =>
    message.fields.some((f) => rules.rulesOf(f) !== undefined || (f.fieldKind === "list" && f.listKind === "message" && hasRules(f.message)));
  return createRouteTable(services)
    .routes.filter((route) => hasRules(route.method.input))
    .map((route) => ({ route, operation: document.paths[route.path.template]![route.httpMethod.toLowerCase() as "get" | "post"]! }));
}

describe(`the field rules at their boundaries, over REST and Connect, against the OpenAPI document (${testStoreKind} store)`, () => {
  let server: TestServer;
  let rest: RestClient;
  let fixtures: Fixtures;
  const rpc = new Map<string, Client<DescService>>();

  before(async () => {
    server = await startTestServer({ processors });
    rest = createRestClient(server);
    const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
    for (const service of services) rpc.set(service.typeName, createClient(service, transport));
    const accounts: string[] = [];
    for (let i = 0; i < 10; i++) {
      const body = { accountName: "Ada Stores", accountNumber: `98765432${String(i).padStart(2, "0")}`, bankName: "Example Bank", bankCode: "058" };
      accounts.push(expectJson<{ id: string }>(await rest.createAccount(body), 201).id);
    }
    const endpoint = expectJson<{ id: string }>(await rest.request("POST", "/v2/webhook-endpoints", { json: { url: "https://shop.example.com/hooks" } }), 201);
    const catalogue = ["card", "bank_transfer", "ussd", ...processors];
    fixtures = {
      base: {
        CreatePaymentIntent: {
          amount: 1_000_000_000_000,
          customerEmail: "ada@example.com",
          currency: "NGN",
          clientReference: "boundary-1",
          receiptEmail: "accounts@example.com",
          paymentMethod: [longestName],
          callbackUrl: "https://shop.example.com/paid",
          settlementAccounts: [{ settlementAccountId: accounts[0], splitAmount: 1 }],
          meta: [{ name: "order_id", value: "A-1001" }],
        },
        CreateSettlementAccount: { accountName: "Ada Stores", accountNumber: "0123456789", bankName: "Example Bank", bankCode: "058" },
        CreateWebhookEndpoint: { url: "https://shop.example.com/hooks", eventTypes: ["payment_intent.succeeded"], description: "Orders" },
        ListPaymentIntents: { clientReference: "boundary-1", meta: [{ name: "order_id", value: "A-1001" }] },
        ListSettlementAccounts: {},
        ListEvents: {},
        ListWebhookDeliveries: { id: endpoint.id },
        RotateWebhookEndpointSecret: { id: endpoint.id },
      },
      pools: {
        paymentMethod: [...catalogue, "proc_g"],
        settlementAccounts: [...accounts, "sa_more"].map((settlementAccountId) => ({ settlementAccountId, splitAmount: 1 })),
        eventTypes,
        // Names unique, as the service requires of meta and its filters.
        meta: Array.from({ length: 51 }, (_, i) => ({ name: `key_${i}`, value: `value ${i}` })),
      },
    };
  });
  after(() => server.close());

  /** Sends a case over REST: the status and message, and whether the document accepts the request. */
  async function overRest(route: ReturnType<typeof routesWithRules>[number]["route"], operation: { parameters?: unknown[]; requestBody?: { content: Record<string, { schema: object }> } }, json: Record<string, unknown>) {
    let path = route.path.template;
    for (const variable of route.path.variables) path = path.replace(`{${variable}}`, encodeURIComponent(String(json[variable])));
    let documentProblems: string[];
    let response;
    if (route.body === "*") {
      // A path variable goes in the path only (RotateWebhookEndpointSecret's id), never in the body too.
      const body = Object.fromEntries(Object.entries(json).filter(([name]) => !route.path.variables.includes(name)));
      documentProblems = validator.problemsOf(operation.requestBody!.content["application/json"]!.schema, body);
      response = await rest.request(route.httpMethod, path, { json: body });
    } else {
      const query = new URLSearchParams();
      documentProblems = [];
      for (const parameter of (operation.parameters ?? []) as Parameter[]) {
        if (!("in" in parameter) || parameter.in !== "query" || json[parameter.name] === undefined) continue;
        if (parameter.style === "deepObject") {
          // A name/value list: meta[name]=value, which the document types as one object.
          const entries = json[parameter.name] as { name: string; value: string }[];
          for (const { name, value } of entries) query.append(`${parameter.name}[${name}]`, value);
          documentProblems.push(...validator.problemsOf(parameter.schema, Object.fromEntries(entries.map((e) => [e.name, e.value]))));
          continue;
        }
        const text = String(json[parameter.name]);
        query.set(parameter.name, text);
        // A query value is text; the document types it.
        const typed = (parameter.schema as { type?: string }).type === "integer" && /^-?\d+$/.test(text) ? Number(text) : text;
        documentProblems.push(...validator.problemsOf(parameter.schema, typed));
      }
      const search = query.toString();
      response = await rest.request(route.httpMethod, `${path}${search === "" ? "" : `?${search}`}`);
    }
    return { status: response.status, message: response.status === 400 ? (JSON.parse(response.text) as { message: string }).message : undefined, documentAccepts: documentProblems.length === 0, problems: documentProblems };
  }

  async function overConnect(service: DescService, method: DescMethod, json: Record<string, unknown>) {
    const client = rpc.get(service.typeName)! as unknown as Record<string, (input: unknown, options: object) => Promise<unknown>>;
    try {
      await client[method.localName]!(fromJson(method.input, json as never), { headers: { authorization: server.bearer() } });
      return undefined;
    } catch (error) {
      assert.ok(error instanceof ConnectError, String(error));
      return error;
    }
  }

  const routes = routesWithRules();

  it("walks the merchant requests that have field rules", () => {
    assert.deepEqual(
      routes.map(({ route }) => route.method.name).sort(),
      ["CreatePaymentIntent", "CreateSettlementAccount", "CreateWebhookEndpoint", "ListEvents", "ListPaymentIntents", "ListSettlementAccounts", "ListWebhookDeliveries", "RotateWebhookEndpointSecret"],
    );
  });

  for (const { route, operation } of routes) {
    it(`${route.method.name}: every rule's boundaries answer as the rule says, and as the document says`, async () => {
      const cases = casesOf(route.method.input, fixtures.base[route.method.name]!, fixtures.pools);
      const exercised = new Set(cases.map((c) => c.label.split(/[:[.]/)[0]!));
      for (const field of route.method.input.fields) {
        if (rules.rulesOf(field)) assert.ok(exercised.has(field.jsonName), `${field.jsonName} has rules and no case`);
      }
      const problems: string[] = [];
      for (const c of cases) {
        const answer = await overRest(route, operation, c.json);
        if (c.rest.accepted && answer.status === 400) problems.push(`${c.label}: REST refused it: ${answer.message}`);
        if (!c.rest.accepted && (answer.status !== 400 || answer.message !== c.rest.message)) {
          problems.push(`${c.label}: REST answered ${answer.status} ${answer.message ?? ""}, not 400 ${c.rest.message}`);
        }
        if (answer.documentAccepts !== (answer.status !== 400)) {
          problems.push(`${c.label}: the document ${answer.documentAccepts ? "accepts" : "refuses"} what the server ${answer.status === 400 ? "refuses" : "accepts"} ${answer.problems.join("; ")}`);
        }
        const error = await overConnect(route.service, route.method, c.json);
        if (c.rpc.accepted && error?.code === Code.InvalidArgument) problems.push(`${c.label}: Connect refused it: ${error.rawMessage}`);
        if (!c.rpc.accepted && (error?.code !== Code.InvalidArgument || error.rawMessage !== c.rpc.message)) {
          problems.push(`${c.label}: Connect answered ${error ? `${Code[error.code]} ${error.rawMessage}` : "OK"}, not InvalidArgument ${c.rpc.message}`);
        }
      }
      assert.deepEqual(problems, []);
      assert.ok(cases.length >= 5, `${cases.length} cases`);
    });
  }
});
