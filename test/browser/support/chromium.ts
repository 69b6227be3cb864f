import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { it } from "node:test";
import { chromium, type Browser } from "playwright-core";

/** Debian's Chromium: the only browser here (never a downloaded one). */
const chromiumPath = "/usr/bin/chromium";
const missingBrowser = existsSync(chromiumPath)
  ? undefined
  : `${chromiumPath} is missing: install the Debian package chromium to run the browser tests (REQUIRE_BROWSER=1 makes this a failure)`;

/**
 * withoutBrowser, called first in a browser suite: when Chromium is missing
 * it adds one visible test (a failure under REQUIRE_BROWSER=1, as CI sets,
 * else a skip saying what to install), so the run's summary counts it, and
 * answers true: the suite adds nothing else.
 */
export function withoutBrowser(scenario = "runs the browser scenarios"): boolean {
  if (!missingBrowser) return false;
  if (process.env.REQUIRE_BROWSER === "1") it("finds Chromium", () => assert.fail(missingBrowser));
  else it(scenario, { skip: missingBrowser }, () => {});
  return true;
}

/** launchChromium starts headless Chromium as this machine allows (no sandbox as root, nothing fetched in the background). */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--no-first-run", "--disable-component-update", "--disable-sync", ...extraArgs],
  });
}

/** A stand-in for the merchant's site on 127.0.0.1: records every URL it is sent to and answers a page. */
export interface MerchantSite {
  readonly origin: string;
  readonly visits: URL[];
  close(): Promise<void>;
}

/** startMerchantSite serves page(url) as HTML for every request (by default a "Back at the shop" page). */
export async function startMerchantSite(page: (url: URL) => string = () => "<!doctype html><title>Merchant</title><h1>Back at the shop</h1>"): Promise<MerchantSite> {
  const visits: URL[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    visits.push(url);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(page(url));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    visits,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
