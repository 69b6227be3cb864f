import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { cards, createIntent, openCheckout, payByCard, seeOther, tokenOf } from "../checkout/support/checkout-client.js";
import { createRestClient, type RestClient } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { captureLogs, waitForLine, type CapturedLogs } from "./support/capture-logs.js";

describe("request logs of the checkout pages", () => {
  let server: TestServer;
  let client: RestClient;
  let logs: CapturedLogs;
  before(async () => {
    logs = captureLogs();
    server = await startTestServer({ logger: logs.logger });
    client = createRestClient(server);
  });
  after(() => server.close());

  it("label the page by its template and never log the token or the card number", async () => {
    const intent = await createIntent(client, { paymentMethod: ["card"] });
    const token = tokenOf(intent.checkoutLink);
    const opened = await openCheckout(intent.checkoutLink);
    seeOther(await payByCard(intent.checkoutLink, opened, { number: cards.succeeds }), server.url);

    const page = await waitForLine(logs, (l) => l["msg"] === "request" && l["method"] === "GET" && l["route"] === "/checkout/{token}");
    assert.equal(page["status"], 200);
    const pay = await waitForLine(logs, (l) => l["msg"] === "request" && l["method"] === "POST" && l["route"] === "/checkout/{token}/pay");
    assert.equal(pay["status"], 303);
    const everything = JSON.stringify(logs.lines());
    assert.ok(!everything.includes(token), "the checkout token reached the logs");
    assert.ok(!everything.includes(cards.succeeds.replace(/ /g, "")) && !everything.includes(cards.succeeds), "a card number reached the logs");
  });
});
