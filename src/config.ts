import { processorNamePattern } from "./service/payment-method-catalogue.js";

/** Config is every setting, read and checked once at start (see README, Configuration). */
export interface Config {
  host: string;
  port: number;
  basePath: string;
  publicUrl: string;
  /** Unset: start with a generated demo key. */
  apiKeys: { merchantId: string; key: string }[] | undefined;
  processors: string[];
  /** Unset: a random secret per process (page tokens then do not survive a restart). */
  pageTokenSecret: string | undefined;
  maxBodyBytes: number;
}

/** ConfigError names the variable, the value and what is allowed, in one line. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function fail(name: string, value: string, allowed: string): never {
  throw new ConfigError(`${name}=${JSON.stringify(value)} is not valid: ${allowed}`);
}

const merchantIdPattern = /^[A-Za-z0-9_.-]{1,64}$/;
const apiKeyPattern = /^[\x21-\x2b\x2d-\x7e]{16,256}$/;

/** readConfig parses the environment; the first bad value throws a ConfigError. */
export function readConfig(env: Env): Config {
  const host = env.HOST || "127.0.0.1";

  const portText = env.PORT ?? "8080";
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 0 && port <= 65535)) fail("PORT", portText, "an integer from 0 to 65535");

  const basePath = env.BASE_PATH ?? "/v1";
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) {
    fail("BASE_PATH", basePath, 'empty, or a path such as "/v1" with no trailing slash');
  }

  const publicUrl = env.PUBLIC_URL || `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (!/^https?:\/\/[^/?#\s]+$/.test(publicUrl.replace(/\/+$/, "")) || !URL.canParse(publicUrl)) {
    fail("PUBLIC_URL", publicUrl, "an http or https origin such as https://pay.example.com");
  }

  let apiKeys: Config["apiKeys"];
  if (env.API_KEYS !== undefined && env.API_KEYS.trim() !== "") {
    const seen = new Set<string>();
    apiKeys = env.API_KEYS.split(",").map((entry) => {
      const separator = entry.indexOf(":");
      const merchantId = entry.slice(0, separator).trim();
      const key = entry.slice(separator + 1).trim();
      const shown = `${merchantId || entry.trim()}:…`;
      if (separator < 0 || !merchantIdPattern.test(merchantId)) {
        fail("API_KEYS", shown, "comma-separated merchant:key pairs; merchant is 1-64 of A-Z a-z 0-9 _ . -");
      }
      if (!apiKeyPattern.test(key)) fail("API_KEYS", shown, "each key is 16-256 printable characters without spaces or commas");
      if (seen.has(key)) fail("API_KEYS", shown, "each key may appear once");
      seen.add(key);
      return { merchantId, key };
    });
  }

  const processors = (env.PAYMENT_PROCESSORS ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  for (const name of processors) {
    if (!processorNamePattern.test(name) || ["card", "bank_transfer", "ussd"].includes(name)) {
      fail("PAYMENT_PROCESSORS", name, "comma-separated names of a-z 0-9 _ (starting with a letter), other than card, bank_transfer, ussd");
    }
  }
  if (new Set(processors).size !== processors.length) fail("PAYMENT_PROCESSORS", processors.join(","), "each name once");

  const pageTokenSecret = env.PAGE_TOKEN_SECRET || undefined;
  if (pageTokenSecret !== undefined && pageTokenSecret.length < 32) {
    fail("PAGE_TOKEN_SECRET", "…", "at least 32 characters");
  }

  return { host, port, basePath, publicUrl: publicUrl.replace(/\/+$/, ""), apiKeys, processors, pageTokenSecret, maxBodyBytes: 64 * 1024 };
}
