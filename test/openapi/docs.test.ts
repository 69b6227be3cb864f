import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { acceptsGzip } from "../../src/openapi/static-route.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const dist = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const distFile = (name: string) => readFileSync(path.join(dist, name));
const initScript = readFileSync(new URL("../../src/openapi/swagger-ui-init.js", import.meta.url));

/** A raw GET or HEAD, so the test sees the bytes and headers as sent (fetch would decompress). */
function raw(url: string, headers: Record<string, string> = {}, method = "GET") {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("acceptsGzip", () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ["", false],
    ["gzip", true],
    ["br, gzip;q=0.5", true],
    ["GZIP", true],
    ["*", true],
    ["gzip;q=0", false],
    ["gzip; q=0.000", false],
    ["br, deflate", false],
    ["identity", false],
  ];
  for (const [header, want] of cases) it(`${JSON.stringify(header)} → ${want}`, () => assert.equal(acceptsGzip(header), want));
});

describe("GET {BASE_PATH}/docs: Swagger UI from our own origin", () => {
  let server: TestServer;
  let html: string;
  let headers: Headers;
  /** The asset URLs the page references, by kind. */
  const assets: Record<"stylesheet" | "favicon" | "bundle" | "init", string> = { stylesheet: "", favicon: "", bundle: "", init: "" };

  before(async () => {
    server = await startTestServer({ basePath: "/api" });
    const res = await fetch(`${server.restUrl}/docs`);
    assert.equal(res.status, 200);
    headers = res.headers;
    html = await res.text();
    assets.stylesheet = /<link rel="stylesheet" href="([^"]+)">/.exec(html)?.[1] ?? "";
    assets.favicon = /<link rel="icon" type="image\/png" sizes="32x32" href="([^"]+)">/.exec(html)?.[1] ?? "";
    [assets.bundle = "", assets.init = ""] = [...html.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]!);
  });
  after(() => server.close());

  it("is a shell page with a strict CSP: scripts and styles from 'self', data: images, connections to this server", () => {
    assert.equal(headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(headers.get("cache-control"), "no-cache");
    assert.equal(headers.get("x-content-type-options"), "nosniff");
    assert.equal(headers.get("referrer-policy"), "no-referrer");
    assert.equal(
      headers.get("content-security-policy"),
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ${server.url}; ` +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    assert.match(html, /<title>Payment Intent API<\/title>/);
    assert.match(html, /<div id="swagger-ui" data-openapi-url="\/api\/openapi.json"><\/div>/);
  });

  it("has no inline script or style and names no other host", () => {
    assert.equal([...html.matchAll(/<script/g)].length, 2);
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)|<script[^>]*>[^<]|<style|\sstyle=|\son[a-z]+=/i);
    assert.doesNotMatch(html, /https?:|\/\/[a-z]/i);
  });

  it("references each asset by a content-hashed name under {BASE_PATH}/docs/assets/", () => {
    assert.match(assets.stylesheet, /^\/api\/docs\/assets\/swagger-ui\.[0-9a-f]{16}\.css$/);
    assert.match(assets.favicon, /^\/api\/docs\/assets\/favicon-32x32\.[0-9a-f]{16}\.png$/);
    assert.match(assets.bundle, /^\/api\/docs\/assets\/swagger-ui-bundle\.[0-9a-f]{16}\.js$/);
    assert.match(assets.init, /^\/api\/docs\/assets\/swagger-ui-init\.[0-9a-f]{16}\.js$/);
  });

  it("serves swagger-ui-dist's own files and our init script, cacheable for a year", async () => {
    const expected: [string, string, Buffer][] = [
      // The trailing source-map comment is dropped: the maps are not served.
      [assets.stylesheet, "text/css; charset=utf-8", Buffer.from(distFile("swagger-ui.css").toString("utf8").replace(/\n?\/\*# sourceMappingURL=\S+ ?\*\/\s*$/, "\n"))],
      [assets.bundle, "text/javascript; charset=utf-8", Buffer.from(distFile("swagger-ui-bundle.js").toString("utf8").replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, "\n"))],
      [assets.init, "text/javascript; charset=utf-8", initScript],
      [assets.favicon, "image/png", distFile("favicon-32x32.png")],
    ];
    for (const [url, contentType, body] of expected) {
      const res = await raw(`${server.url}${url}`);
      assert.equal(res.status, 200, url);
      assert.equal(res.headers["content-type"], contentType, url);
      assert.equal(res.headers["cache-control"], "public, max-age=31536000, immutable", url);
      assert.equal(res.headers["x-content-type-options"], "nosniff", url);
      assert.equal(res.headers["content-encoding"], undefined, url);
      assert.equal(Number(res.headers["content-length"]), body.length, url);
      assert.ok(res.body.equals(body), `${url} is the file`);
      assert.ok(url.includes(`.${createHash("sha256").update(body).digest("hex").slice(0, 16)}.`), `${url} is named after its content`);
      assert.doesNotMatch(res.body.toString("latin1"), /sourceMappingURL|scarf/i, url);
    }
    assert.match(initScript.toString("utf8"), /validatorUrl: null/);
  });

  it("sends text assets gzipped when the client accepts gzip, and never when it refuses it", async () => {
    const identity = await raw(`${server.url}${assets.bundle}`);
    const gzipped = await raw(`${server.url}${assets.bundle}`, { "accept-encoding": "br, gzip" });
    assert.equal(gzipped.headers["content-encoding"], "gzip");
    assert.equal(gzipped.headers["vary"], "accept-encoding");
    assert.equal(Number(gzipped.headers["content-length"]), gzipped.body.length);
    assert.ok(gzipped.body.length < identity.body.length / 2, `${gzipped.body.length} bytes gzipped of ${identity.body.length}`);
    assert.ok(gunzipSync(gzipped.body).equals(identity.body));
    assert.equal((await raw(`${server.url}${assets.bundle}`, { "accept-encoding": "gzip;q=0" })).headers["content-encoding"], undefined);
    // The image is compressed already.
    assert.equal((await raw(`${server.url}${assets.favicon}`, { "accept-encoding": "gzip" })).headers["content-encoding"], undefined);
  });

  it("answers HEAD with the headers only, other methods with 405, and unknown asset names with 404", async () => {
    const head = await raw(`${server.url}${assets.init}`, {}, "HEAD");
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers["content-length"]), initScript.length);
    assert.equal(head.body.length, 0);
    for (const url of [`${server.restUrl}/docs`, `${server.url}${assets.init}`]) {
      const res = await fetch(url, { method: "POST" });
      assert.equal(res.status, 405, url);
      assert.equal(res.headers.get("allow"), "GET, HEAD");
    }
    const unknown = await fetch(`${server.url}${assets.bundle.replace(/\.[0-9a-f]{16}\./, ".0000000000000000.")}`);
    assert.equal(unknown.status, 404);
    assert.equal((await fetch(`${server.url}/v1/docs`)).status, 404, "only under the server's own BASE_PATH");
  });
});
