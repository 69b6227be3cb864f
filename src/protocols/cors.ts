import { cors as connectCors } from "@connectrpc/connect";
import type { NodeRequest, NodeResponse } from "../http/node-http.js";

/** CorsOptions: CORS_ALLOWED_ORIGINS, read once at start. */
export interface CorsOptions {
  /** Exact origins ("https://shop.example.com") allowed to call from a browser, or "*" for any. */
  allowedOrigins: "*" | readonly string[];
  /** How long a browser may cache a preflight answer, in seconds. */
  maxAgeSeconds?: number;
}

/** Headers our own responses carry that browser code needs to read. */
const ourExposedHeaders = ["Idempotent-Replayed", "X-Request-Id", "Link", "Retry-After", "Location"];
/** Headers browser code sends beyond Connect's: the API key and a request id. */
const ourAllowedHeaders = ["Authorization", "X-Request-Id"];

/**
 * Cors applies CORS (the Fetch standard's CORS protocol) for the origins the
 * operator allows: responses to those origins carry Access-Control-Allow-Origin
 * and the headers scripts may read; preflights are answered 204 with what each
 * route accepts. Credentials are never allowed: the API key is a bearer token
 * the page sends itself, so cookies have no business here. Requests from other
 * origins get no CORS headers at all, and the browser keeps their answers
 * from the page.
 */
export interface Cors {
  /**
   * Decorates the response for the request's origin. Returns true when the
   * request was a CORS preflight and has been answered here.
   * @param methods the methods the target accepts (Access-Control-Allow-Methods)
   * @param publicResource readable from any origin whenever CORS is on (the OpenAPI document)
   */
  handle(req: NodeRequest, res: CorsResponse, methods: readonly string[], publicResource?: boolean): boolean;
  /**
   * Decorates a response that is no route's (an unknown path): an allowed
   * origin may read the 404, and a preflight gets it too, which the browser
   * reports as a failed preflight rather than a 204 for nothing.
   */
  decorate(req: NodeRequest, res: CorsResponse): void;
}

type CorsResponse = NodeResponse & { setHeader(name: string, value: string): unknown };

export function createCors(options: CorsOptions): Cors {
  const anyOrigin = options.allowedOrigins === "*";
  const origins = new Set(anyOrigin ? [] : options.allowedOrigins);
  const exposed = [...new Set([...connectCors.exposedHeaders, ...ourExposedHeaders])].join(", ");
  const allowedHeaders = [...new Set([...connectCors.allowedHeaders, ...ourAllowedHeaders].map((h) => h.toLowerCase()))].join(", ");
  const maxAge = String(options.maxAgeSeconds ?? 7200);

  /** The Access-Control-Allow-Origin value for this request, or undefined when its origin gets no CORS headers. */
  function allowOriginOf(req: NodeRequest, res: CorsResponse, publicResource: boolean): string | undefined {
    const origin = req.headers["origin"];
    // The answer depends on Origin, so a shared cache must key on it (Fetch standard §3.2.5 "CORS protocol and HTTP caches").
    if (!anyOrigin) res.setHeader("vary", "Origin");
    if (typeof origin !== "string") return undefined;
    if (anyOrigin) return "*";
    if (origins.has(origin)) return origin;
    return publicResource ? "*" : undefined;
  }

  function expose(res: CorsResponse, allowOrigin: string): void {
    res.setHeader("access-control-allow-origin", allowOrigin);
    res.setHeader("access-control-expose-headers", exposed);
  }

  return {
    handle(req, res, methods, publicResource = false) {
      const allowOrigin = allowOriginOf(req, res, publicResource);
      if (allowOrigin === undefined) return false;
      const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
      if (preflight) {
        res.writeHead(204, {
          "access-control-allow-origin": allowOrigin,
          "access-control-allow-methods": methods.join(", "),
          "access-control-allow-headers": allowedHeaders,
          "access-control-max-age": maxAge,
          "cache-control": "no-store",
        });
        res.end("");
        return true;
      }
      expose(res, allowOrigin);
      return false;
    },
    decorate(req, res) {
      const allowOrigin = allowOriginOf(req, res, false);
      if (allowOrigin !== undefined) expose(res, allowOrigin);
    },
  };
}

/**
 * The methods an RPC path accepts from a browser: POST. Connect's list also
 * has GET, for methods marked NO_SIDE_EFFECTS and clients set to useHttpGet;
 * no method here is marked so and the dispatcher answers GET with 405, so a
 * preflight must not promise it.
 */
export const rpcMethods: readonly string[] = ["POST"];
