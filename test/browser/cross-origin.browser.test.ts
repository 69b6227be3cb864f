import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { build } from "esbuild";
import type { Browser, Page } from "playwright-core";
import type { RequestOutcome } from "../../src/observability/request-observer.js";
import type { CorsOptions } from "../../src/protocols/cors.js";
import { createRestClient, expectJson, uniqueReference, type PaymentIntentListJson } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import type { CrossOriginPage, Outcome, ProtocolReport, ScenarioOptions } from "./support/cross-origin-page.js";
import { launchChromium, withoutBrowser } from "./support/chromium.js";

const pageEntry = fileURLToPath(new URL("./support/cross-origin-page.ts", import.meta.url));

/** bundlePage builds the page's script in memory, as a merchant's build would: connect-web, the generated clients, nothing fetched at run time. */
async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [pageEntry],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

/**
 * The merchant's site, on an origin of its own: a page and its bundled
 * script. Its Content-Security-Policy lets the page load only its own script
 * and connect only to the API, so nothing comes from any other host.
 */
interface MerchantSite {
  readonly origin: string;
  close(): Promise<void>;
}

async function startMerchantSite(script: string, apiOrigins: () => string[]): Promise<MerchantSite> {
  const server: Server = createServer((req, res) => {
    if (req.url === "/") {
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'none'; script-src 'self'; connect-src ${apiOrigins().join(" ")}`,
      });
      res.end(`<!doctype html><meta charset="utf-8"><title>Shop</title><h1>Shop</h1><script src="/app.js"></script>`);
    } else if (req.url === "/app.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
      res.end(script);
    } else {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** An API server and every request it answered. */
interface Api {
  server: TestServer;
  outcomes: RequestOutcome[];
}

async function startApi(cors: (siteOrigin: string) => CorsOptions | undefined, siteOrigin: string): Promise<Api> {
  const outcomes: RequestOutcome[] = [];
  const allowed = cors(siteOrigin)?.allowedOrigins;
  const server = await startTestServer({
    settings: allowed === undefined ? {} : { CORS_ALLOWED_ORIGINS: allowed === "*" ? "*" : allowed.join(",") },
    onRequestEnd: (outcome) => void outcomes.push(outcome),
  });
  return { server, outcomes };
}

describe("a page on another origin calling the API from headless Chromium", { timeout: 90_000 }, () => {
  if (withoutBrowser()) return;

  let site: MerchantSite;
  let allowed: Api;
  let off: Api;
  /** CORS on, but for another origin than the page's. */
  let elsewhere: Api;
  let browser: Browser;
  let page: Page;
  /** Every URL the page requested, and every console error, since the last reset. */
  let requested: string[] = [];
  let consoleErrors: string[] = [];

  before(async () => {
    const apis: Api[] = [];
    [site, browser] = await Promise.all([
      bundlePage().then((script) => startMerchantSite(script, () => apis.map((api) => api.server.url))),
      // No name resolves: the page can reach 127.0.0.1 and nothing else.
      launchChromium(["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]),
    ]);
    [allowed, off, elsewhere] = await Promise.all([
      startApi((origin) => ({ allowedOrigins: [origin] }), site.origin),
      startApi(() => undefined, site.origin),
      startApi(() => ({ allowedOrigins: ["https://shop.example.com"] }), site.origin),
    ]);
    apis.push(allowed, off, elsewhere);
    // No context.route: Playwright answers preflights itself while it intercepts, which would hide what the server says.
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    page.on("request", (request) => requested.push(request.url()));
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(`page error: ${error.message}`));
    const response = await page.goto(`${site.origin}/`);
    assert.equal(response?.status(), 200);
    await page.waitForFunction(() => "crossOriginPage" in globalThis);
  });
  after(async () => {
    await browser?.close();
    await Promise.all([site?.close(), allowed?.server.close(), off?.server.close(), elsewhere?.server.close()]);
  });

  /** run has the page call one API and returns its reports by protocol. */
  async function run(api: Api, reference: string): Promise<Record<ProtocolReport["protocol"], ProtocolReport>> {
    requested = [];
    consoleErrors = [];
    const options: ScenarioOptions = { apiUrl: api.server.url, restUrl: api.server.restUrl, authorization: api.server.bearer(), reference };
    const reports = await page.evaluate((o) => (globalThis as unknown as { crossOriginPage: CrossOriginPage }).crossOriginPage.run(o), options);
    for (const url of requested) {
      assert.equal(new URL(url).origin, api.server.url, `the page requested ${url}: only the API is called`);
    }
    return Object.fromEntries(reports.map((report) => [report.protocol, report])) as Record<ProtocolReport["protocol"], ProtocolReport>;
  }

  const requestIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  it("loaded the page and its bundle from its own origin only", () => {
    assert.deepEqual(requested.map((url) => new URL(url).pathname), ["/", "/app.js"]);
    for (const url of requested) assert.equal(new URL(url).origin, site.origin);
    assert.notEqual(site.origin, allowed.server.url, "the page and the API are on different origins");
  });

  it("with the page's origin allowed: create, replay, list and errors work over Connect, gRPC-Web and REST", async () => {
    const reference = uniqueReference("xo");
    const reports = await run(allowed, reference);
    // Chromium logs every non-2xx load; those are the four error cases that answer one (Connect's and REST's), and nothing else.
    const failedLoad = (status: string) => `Failed to load resource: the server responded with a status of ${status}`;
    assert.deepEqual(consoleErrors.toSorted(), [failedLoad("400 (Bad Request)"), failedLoad("400 (Bad Request)"), failedLoad("401 (Unauthorized)"), failedLoad("401 (Unauthorized)")]);

    for (const protocol of ["connect", "grpc-web"] as const) {
      const report = reports[protocol];
      assert.equal(report.create.status, "OK", `${protocol} create: ${JSON.stringify(report.create)}`);
      assert.match(report.create.id ?? "", /^pi_/);
      assert.match(report.create.requestId ?? "", requestIdPattern, `${protocol}: the page reads x-request-id`);
      assert.equal(report.create.replayed, null);
      assert.deepEqual(
        { status: report.replay.status, id: report.replay.id, replayed: report.replay.replayed },
        { status: "OK", id: report.create.id, replayed: "true" },
        `${protocol}: the replay is the same intent, marked idempotent-replayed`,
      );
      assert.match(report.replay.requestId ?? "", requestIdPattern);
      assert.notEqual(report.replay.requestId, report.create.requestId);
      assert.equal(report.list.status, "OK");
      assert.ok(report.list.ids?.includes(report.create.id!), `${protocol}: the list holds the intent`);
      assert.deepEqual(report.unauthenticated, { status: "Unauthenticated", message: "missing Authorization header: send 'Authorization: Bearer <api key>'" });
      assert.equal(report.invalid.status, "InvalidArgument");
      assert.match(report.invalid.message ?? "", /amount/);
    }

    const rest = reports.rest;
    assert.equal(rest.create.status, 201, JSON.stringify(rest.create));
    assert.match(rest.create.requestId ?? "", requestIdPattern, "REST: the page reads X-Request-Id");
    // A path: a page on another origin resolves it against the API's URL (response.url), not its own.
    assert.equal(rest.create.location, `/v1/v2/payment-intents/${rest.create.id}`);
    assert.equal(rest.create.replayed, null);
    assert.deepEqual({ status: rest.replay.status, id: rest.replay.id, replayed: rest.replay.replayed }, { status: 200, id: rest.create.id, replayed: "true" });
    assert.equal(rest.list.status, 200);
    assert.deepEqual(
      new Set(rest.list.ids),
      new Set([reports.connect.create.id, reports["grpc-web"].create.id, rest.create.id]),
      "the list holds the three intents, one per protocol",
    );
    assert.deepEqual(
      { status: rest.unauthenticated.status, message: rest.unauthenticated.message },
      { status: 401, message: "missing Authorization header: send 'Authorization: Bearer <api key>'" },
    );
    assert.match(rest.unauthenticated.requestId ?? "", requestIdPattern, "the error's request id is readable too");
    assert.equal(rest.invalid.status, 400);
    assert.match(rest.invalid.message ?? "", /amount/);

    // The browser asked first: preflights answered 204 on the RPC paths and the REST collection.
    const preflights = allowed.outcomes.filter((outcome) => outcome.method === "OPTIONS");
    assert.ok(preflights.length >= 3, `preflights seen: ${preflights.length}`);
    assert.deepEqual(new Set(preflights.map((outcome) => outcome.status)), new Set([204]));
    assert.ok(preflights.some((outcome) => outcome.route === "/v2/payment-intents"));
    assert.ok(preflights.some((outcome) => outcome.route === "/payments.v2.PaymentIntentService/CreatePaymentIntent"));
  });

  /** Asserts every call of the run failed in the browser, with nothing readable, and the server created nothing. */
  async function assertRefusedByBrowser(api: Api, name: string) {
    const reference = uniqueReference("xo-refused");
    const reports = await run(api, reference);
    for (const report of Object.values(reports)) {
      for (const call of ["create", "replay", "list", "unauthenticated", "invalid"] as const) {
        const outcome: Outcome = report[call];
        assert.deepEqual(outcome, { failure: "TypeError: Failed to fetch" }, `${name}: ${report.protocol} ${call} must fail as a network error`);
      }
    }
    // Chromium says why: every refused preflight is logged as a CORS refusal.
    const refusals = consoleErrors.filter((text) => /blocked by CORS policy/.test(text));
    assert.ok(refusals.length >= 15, `${name}: CORS refusals logged: ${refusals.length}\n${consoleErrors.join("\n")}`);
    assert.ok(refusals.every((text) => text.includes(`from origin '${site.origin}'`)));
    // The preflights were refused (405), so the calls themselves never reached the server: nothing was created.
    assert.ok(api.outcomes.length > 0, "the browser did ask the server");
    for (const outcome of api.outcomes) assert.deepEqual({ method: outcome.method, status: outcome.status }, { method: "OPTIONS", status: 405 });
    const list = expectJson<PaymentIntentListJson>(await createRestClient(api.server).listIntents({ pageSize: "100" }), 200);
    assert.deepEqual(list.paymentIntents, []);
  }

  it("with CORS off: every call fails in the page with a CORS error, and nothing is created", async () => {
    await assertRefusedByBrowser(off, "CORS off");
  });

  it("with CORS on for other origins only: the same", async () => {
    await assertRefusedByBrowser(elsewhere, "another origin allowed");
  });
});
