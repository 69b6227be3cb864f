import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestServer as startSandbox, type TestServer as Sandbox } from "../../src/testing/index.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** What a newcomer meets in a first session with the sandbox (issue 22, part 4). */
describe("a first run against the sandbox", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox();
  });
  after(() => sandbox.close());

  const post = (path: string, body: unknown) =>
    fetch(`${sandbox.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${sandbox.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));

  it("registers a webhook receiver on this machine, over http", async () => {
    for (const url of ["http://127.0.0.1:9/hooks", "http://localhost:9/hooks", "https://localhost/hooks"]) {
      const made = await post("/v2/webhook-endpoints", { url });
      assert.equal(made.status, 201, `${url}: ${JSON.stringify(made.body)}`);
    }
  });

  it("says a string was sent when amount is a digit string", async () => {
    const refused = await post("/v2/payment-intents", { amount: "50000", customerEmail: "ada@example.com", clientReference: "first-run-string" });
    assert.deepEqual(refused, {
      status: 400,
      body: { status: 400, title: "Bad Request", message: "amount must be an integer, but a string was sent: write the number without quotes" },
    });
  });

  it("hints at BASE_PATH when a path would be a route under it", async () => {
    const res = await fetch(`${sandbox.url}/v2/payment-intents`, { headers: { authorization: `Bearer ${sandbox.apiKey}` } });
    assert.deepEqual(await res.json(), {
      status: 404,
      title: "Not Found",
      message: "no route for /v2/payment-intents: the REST API is under BASE_PATH /v1, as in /v1/v2/payment-intents",
    });
    // A path that is no route under BASE_PATH either gets no hint.
    const other = await fetch(`${sandbox.url}/nothing-here`);
    assert.equal(((await other.json()) as { message: string }).message, "no route for /nothing-here");
  });
});

describe("webhook receivers outside the sandbox (WEBHOOK_ALLOW_PRIVATE_URLS off)", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ settings: { WEBHOOK_ALLOW_PRIVATE_URLS: "false" } });
  });
  after(() => server.close());

  it("refuses a local receiver with a message naming the setting", async () => {
    const res = await fetch(`${server.restUrl}/v2/webhook-endpoints`, {
      method: "POST",
      headers: { authorization: server.bearer(), "content-type": "application/json" },
      body: JSON.stringify({ url: "http://127.0.0.1:9/hooks" }),
    });
    assert.deepEqual(await res.json(), {
      status: 400,
      title: "Bad Request",
      message: "url must use https; local receivers need WEBHOOK_ALLOW_PRIVATE_URLS=true on the service (development only)",
    });
  });
});
