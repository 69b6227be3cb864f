import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { createOpenApiDocument } from "../../src/openapi/openapi-document.js";
import { createRestClient, expectJson, type PaymentIntentListJson } from "../support/rest-client.js";
import { startTestServer, type TestServer } from "../support/test-server.js";
import { launchChromium, withoutBrowser } from "./support/chromium.js";

/** What the page reports of a CSP refusal (the project compiles without the DOM lib). */
type ViolationEvent = { violatedDirective: string; blockedURI: string };
type ViolationTarget = { addEventListener(type: string, listener: (event: ViolationEvent) => void): void };

describe("the docs page in headless Chromium", { timeout: 90_000 }, () => {
  if (withoutBrowser()) return;

  let server: TestServer;
  let browser: Browser;
  let page: Page;
  /** Requests the page tried to send anywhere but the server: each is aborted and fails the test. */
  const foreignRequests: string[] = [];
  /** Console errors and CSP refusals. */
  const problems: string[] = [];
  const screenshot = path.join(tmpdir(), "docs.browser.png");
  const tryItOutScreenshot = path.join(tmpdir(), "docs-try-it-out.browser.png");

  before(async () => {
    [server, browser] = await Promise.all([
      startTestServer(),
      launchChromium(),
    ]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    context.setDefaultTimeout(15_000);
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (new URL(url).origin === server.url) return route.continue();
      foreignRequests.push(url);
      return route.abort("blockedbyclient");
    });
    page = await context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()} ${message.location().url}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    await page.exposeFunction("reportCspViolation", (text: string) => problems.push(`CSP: ${text}`));
    await page.addInitScript(() => {
      const target = globalThis as unknown as ViolationTarget & { reportCspViolation(text: string): void };
      target.addEventListener("securitypolicyviolation", (event) =>
        target.reportCspViolation(`${event.violatedDirective} refused ${event.blockedURI}`),
      );
    });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows every operation and schema of the document", async () => {
    const response = await page.goto(`${server.restUrl}/docs`);
    assert.equal(response?.status(), 200);
    const document = createOpenApiDocument({ basePath: "/v1", publicUrl: server.url });
    for (const [route, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const block = page.locator(`#operations-${operation.tags[0]!.replaceAll(" ", "_")}-${operation.operationId}`);
        await block.waitFor({ state: "visible" });
        const summary = await block.locator(".opblock-summary").innerText();
        assert.match(summary, new RegExp(`^${method.toUpperCase()}\\s+${route.replace(/[{}]/g, "\\$&")}\\s+${operation.summary}`, "m"), operation.operationId);
      }
    }
    const models = page.locator("section.models");
    await models.getByText("Schemas", { exact: true }).waitFor();
    // OpenAPI 3.1 schemas render as JSON Schema 2020-12 articles, one per schema, titled with its name.
    const modelNames = await models.locator("article[data-json-schema-level='0'] > .json-schema-2020-12-head .json-schema-2020-12__title").allInnerTexts();
    assert.deepEqual(modelNames.sort(), Object.keys(document.components.schemas).sort());
    // The server URL try-it-out will use: PUBLIC_URL + BASE_PATH.
    assert.equal(await page.locator(".servers select").inputValue(), `${server.url}/v1`);
    await page.screenshot({ path: screenshot });
  });

  it("authorizes with a pasted API key and creates a payment intent with the example body: 201", async () => {
    await page.getByRole("button", { name: "Authorize" }).first().click();
    await page.getByLabel("auth-bearer-value").fill(server.keys.merchantA!);
    await page.getByRole("button", { name: "Apply credentials" }).click();
    await page.getByRole("button", { name: "Close" }).click();

    const create = page.locator("#operations-Payment_intents-CreatePaymentIntent");
    await create.locator(".opblock-summary").click();
    await create.getByRole("button", { name: "Try it out" }).click();
    const body = JSON.parse(await create.locator("textarea.body-param__text").inputValue()) as Record<string, unknown>;
    assert.equal(body["clientReference"], "order-1001", "the first example fills the body");
    await create.getByRole("button", { name: "Execute" }).click();

    const live = create.locator(".live-responses-table");
    await live.waitFor();
    assert.equal((await live.locator("tr.response .response-col_status").innerText()).trim(), "201");
    const shown = JSON.parse(await live.locator("tr.response .highlight-code pre").innerText()) as { id: string; status: string };
    assert.equal(shown.status, "pending");
    assert.match(await live.innerText(), new RegExp(`location: /v1/v2/payment-intents/${shown.id}`));
    await live.scrollIntoViewIfNeeded();
    await page.screenshot({ path: tryItOutScreenshot });

    // The intent really exists, for the merchant whose key was pasted.
    const list = expectJson<PaymentIntentListJson>(await createRestClient(server).listIntents({ clientReference: "order-1001" }), 200);
    assert.deepEqual(list.paymentIntents.map((intent) => intent.id), [shown.id]);
  });

  it("sent nothing to another host and broke no CSP rule", () => {
    assert.deepEqual(foreignRequests, []);
    assert.deepEqual(problems, []);
  });
});
