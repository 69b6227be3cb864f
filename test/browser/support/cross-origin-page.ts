/**
 * The script of a merchant's page on another origin, bundled by esbuild at
 * test time (cross-origin.browser.test.ts) and run in Chromium: it calls the
 * API the way a browser application would, with connect-web's two transports
 * and the generated clients, and with plain fetch to REST, and reports what
 * the page could read. Everything it returns is plain JSON, for
 * page.evaluate.
 */
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { PaymentIntentService } from "../../../gen/payments/v2/payment_intent_pb.js";

export interface ScenarioOptions {
  /** The API's origin: RPC paths hang off it. */
  apiUrl: string;
  /** The REST root, apiUrl + BASE_PATH. */
  restUrl: string;
  /** "Bearer <key>". */
  authorization: string;
  /** Start of the clientReference of each protocol's intent. */
  reference: string;
}

/**
 * Outcome is what the page learnt from one call: the answer it could read, or
 * the failure the browser gave it instead (a CORS refusal is a TypeError
 * "Failed to fetch", with no status and no body).
 */
export interface Outcome {
  /** REST: the HTTP status; RPC: "OK" or the ConnectError's Code name. */
  status?: number | string;
  /** The error's message (the REST body's message, or the ConnectError's raw message). */
  message?: string;
  /** The created intent's id. */
  id?: string;
  /** The ids a list returned. */
  ids?: string[];
  /** Response headers, as script may read them: null when missing or not exposed. */
  requestId?: string | null;
  replayed?: string | null;
  location?: string | null;
  /** Set when no answer was readable: the network error's name and message. */
  failure?: string;
}

/** ProtocolReport is one protocol's run: create, the same create again, list, and two errors. */
export interface ProtocolReport {
  protocol: "connect" | "grpc-web" | "rest";
  create: Outcome;
  replay: Outcome;
  list: Outcome;
  unauthenticated: Outcome;
  invalid: Outcome;
}

const intentOf = (clientReference: string) => ({ amount: 50000n, customerEmail: "ada@example.com", clientReference });

/** rpcFailure reads a failed call: its code and message, or the network failure underneath. */
function rpcFailure(error: unknown): Outcome {
  const connectError = ConnectError.from(error);
  const cause = connectError.cause;
  // connect-web turns a rejected fetch into Unknown with the TypeError as cause: no answer was read.
  if (connectError.code === Code.Unknown && cause instanceof TypeError) return { failure: `${cause.name}: ${cause.message}` };
  return { status: Code[connectError.code], message: connectError.rawMessage };
}

async function runRpc(protocol: "connect" | "grpc-web", transport: Transport, options: ScenarioOptions): Promise<ProtocolReport> {
  const client = createClient(PaymentIntentService, transport);
  const auth = { authorization: options.authorization };
  const request = intentOf(`${options.reference}-${protocol}`);

  async function create(headers: Record<string, string>, init: ReturnType<typeof intentOf>): Promise<Outcome> {
    let requestId: string | null = null;
    let replayed: string | null = null;
    try {
      const intent = await client.createPaymentIntent(init, {
        headers,
        onHeader(received) {
          requestId = received.get("x-request-id");
          replayed = received.get("idempotent-replayed");
        },
      });
      return { status: "OK", id: intent.id, requestId, replayed };
    } catch (error) {
      return rpcFailure(error);
    }
  }

  async function list(): Promise<Outcome> {
    try {
      const page = await client.listPaymentIntents({ pageSize: 50 }, { headers: auth });
      return { status: "OK", ids: page.paymentIntents.map((intent) => intent.id) };
    } catch (error) {
      return rpcFailure(error);
    }
  }

  return {
    protocol,
    create: await create(auth, request),
    replay: await create(auth, request),
    list: await list(),
    unauthenticated: await create({}, request),
    invalid: await create(auth, { ...request, amount: 0n, clientReference: `${request.clientReference}-zero` }),
  };
}

async function runRest(options: ScenarioOptions): Promise<ProtocolReport> {
  const collection = `${options.restUrl}/v2/payment-intents`;
  const body = JSON.stringify({ amount: 50000, customerEmail: "ada@example.com", clientReference: `${options.reference}-rest` });

  async function call(url: string, init: RequestInit): Promise<Outcome> {
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      return { failure: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
    const json = (await response.json()) as { id?: string; message?: string; paymentIntents?: { id: string }[] };
    const outcome: Outcome = {
      status: response.status,
      requestId: response.headers.get("x-request-id"),
      replayed: response.headers.get("idempotent-replayed"),
      location: response.headers.get("location"),
    };
    if (json.id !== undefined) outcome.id = json.id;
    if (json.message !== undefined) outcome.message = json.message;
    if (json.paymentIntents !== undefined) outcome.ids = json.paymentIntents.map((intent) => intent.id);
    return outcome;
  }

  const json = { "content-type": "application/json" };
  const keyed = { ...json, authorization: options.authorization };
  return {
    protocol: "rest",
    create: await call(collection, { method: "POST", headers: keyed, body }),
    replay: await call(collection, { method: "POST", headers: keyed, body }),
    list: await call(`${collection}?pageSize=50`, { headers: { authorization: options.authorization } }),
    unauthenticated: await call(collection, { method: "POST", headers: json, body }),
    invalid: await call(collection, { method: "POST", headers: keyed, body: JSON.stringify({ ...JSON.parse(body), amount: 0 }) }),
  };
}

/** run calls the API over Connect, gRPC-Web and REST, one after the other. */
async function run(options: ScenarioOptions): Promise<ProtocolReport[]> {
  return [
    await runRpc("connect", createConnectTransport({ baseUrl: options.apiUrl }), options),
    await runRpc("grpc-web", createGrpcWebTransport({ baseUrl: options.apiUrl }), options),
    await runRest(options),
  ];
}

/** The page's one global, which the test calls through page.evaluate. */
export interface CrossOriginPage {
  run(options: ScenarioOptions): Promise<ProtocolReport[]>;
}

(globalThis as unknown as { crossOriginPage: CrossOriginPage }).crossOriginPage = { run };
