import { create, type Message } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
} from "@connectrpc/connect";
import type { NodeRequest, NodeResponse } from "../../server/node-http.js";
import type { ApiKeyVerifier } from "../../auth/api-key-verifier.js";
import { authenticate } from "../../auth/authenticate.js";
import { invalid } from "../../service/field-rules.js";
import { idempotentReplayedHeader } from "../connect/payment-intent-handlers.js";
import { errorBody, httpStatusOf } from "../http-status.js";
import { kPrincipal } from "../principal-context.js";
import { decodeRestJson, type FieldAdapters } from "./decode-json.js";
import { decodeRestQuery } from "./decode-query.js";
import { encodeRestJson } from "./encode-json.js";
import { BodyTooLarge, readBody } from "./read-body.js";
import type { RestRoute, RouteTable } from "./route-table.js";


/** A unary RPC implementation as registered with the Connect router. */
export type UnaryMethodImpl = (request: Message, context: HandlerContext) => Promise<unknown> | unknown;

export interface RestGatewayOptions {
  routes: RouteTable;
  /** Implementation of each routed RPC, keyed by "<service typeName>/<method name>". */
  implementations: ReadonlyMap<string, UnaryMethodImpl>;
  verifier: ApiKeyVerifier;
  /** Mount point, e.g. "/v1"; "" mounts at the root. */
  basePath: string;
  maxBodyBytes: number;
  adapters?: FieldAdapters;
  /** Called with anything unexpected that escaped a handler; the client sees only "internal error". */
  onInternalError(error: unknown, req: NodeRequest): void;
}

/** RestError is a transport-level refusal that has no RPC code (405, 413, 415). */
class RestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const restImplementationKey = (service: string, method: string) => `${service}/${method}`;

/**
 * createRestGateway serves the REST API as one more protocol in front of the
 * RPC handlers (the Vanguard design): it routes by the google.api.http rules,
 * decodes path, query and body into the request message, calls the handler in
 * process and renders the response or a {status, title, message} error.
 * Checks run in the contract's order: route, key, media type, size, body.
 */
export function createRestGateway(options: RestGatewayOptions): (req: NodeRequest, res: NodeResponse) => Promise<void> {
  const { routes, basePath } = options;

  async function serve(req: NodeRequest, res: NodeResponse, url: URL): Promise<void> {
    const relative = basePath === "" ? url.pathname : url.pathname.slice(basePath.length);
    if (basePath !== "" && !(url.pathname.startsWith(basePath) && relative.startsWith("/"))) {
      throw new ConnectError(`no route for ${url.pathname}`, Code.NotFound);
    }
    const match = routes.match(req.method ?? "", relative);
    if (match.kind === "not-found") throw new ConnectError(`no route for ${url.pathname}`, Code.NotFound);
    if (match.kind === "method-not-allowed") {
      throw new RestError(405, `${req.method} is not allowed on ${url.pathname}`, { allow: match.allow.join(", ") });
    }
    const { route, pathValues } = match;

    const principal = await authenticate(header(req, "authorization"), options.verifier);

    let init: Record<string, unknown>;
    if (route.body === "*") {
      checkJsonMediaType(header(req, "content-type"));
      const body = await readBody(req, options.maxBodyBytes);
      init = decodeRestJson(route.method.input, parseJson(body), options.adapters);
      if ([...url.searchParams.keys()].length > 0) throw invalid(`unknown query parameter ${[...url.searchParams.keys()][0]}`);
    } else {
      init = decodeRestQuery(route.method.input, url.searchParams, route.path.variables);
    }
    for (const [name, value] of Object.entries(pathValues)) {
      init[route.method.input.fields.find((f) => f.name === name)!.localName] = value;
    }

    const implementation = options.implementations.get(restImplementationKey(route.service.typeName, route.method.name));
    if (!implementation) throw new ConnectError(`${route.method.name} is not implemented`, Code.Unimplemented);
    const context = createHandlerContext({
      service: route.service,
      method: route.method,
      protocolName: "rest",
      requestMethod: req.method ?? "",
      url: url.toString(),
      requestHeader: requestHeaders(req),
      contextValues: createContextValues().set(kPrincipal, principal),
    });
    const output = create(route.method.output, (await implementation(create(route.method.input, init), context)) as never);
    writeSuccess(res, route, url, context, output);
  }

  function writeSuccess(res: NodeResponse, route: RestRoute, url: URL, context: HandlerContext, output: Message) {
    const json = encodeRestJson(route.method.output, output);
    const headers: Record<string, string> = {};
    context.responseHeader.forEach((value, key) => {
      headers[key] = value;
    });
    let status = 200;
    if (route.httpMethod === "POST" && context.responseHeader.get(idempotentReplayedHeader) !== "true") {
      status = 201;
      const location = locationOf(route, json);
      if (location) headers["location"] = location;
    }
    if (typeof json["nextPageToken"] === "string") {
      const next = new URLSearchParams(url.searchParams);
      next.set("pageToken", json["nextPageToken"]);
      headers["link"] = `<${url.pathname}?${next.toString()}>; rel="next"`;
    }
    send(res, status, json, headers);
  }

  /** Location of a created resource: the item route under the collection, when one exists. */
  function locationOf(route: RestRoute, json: Record<string, unknown>): string | undefined {
    if (typeof json["id"] !== "string") return undefined;
    const itemPath = `${route.path.template}/${encodeURIComponent(json["id"])}`;
    const item = routes.match("GET", itemPath);
    return item.kind === "found" ? `${basePath}${itemPath}` : undefined;
  }

  return async (req, res) => {
    try {
      await serve(req, res, parseRequestTarget(req.url ?? "/"));
    } catch (error) {
      writeError(req, res, error, options.onInternalError);
    }
  };
}

/**
 * parseRequestTarget splits an origin-form target (RFC 9112 §3.2.1) into path
 * and query by hand: WHATWG URL parsing would read "//host/v1/..." as a host.
 */
function parseRequestTarget(target: string): URL {
  const queryAt = target.indexOf("?");
  const path = queryAt < 0 ? target : target.slice(0, queryAt);
  const url = new URL("http://gateway.invalid/");
  url.pathname = path.startsWith("/") ? path : `/${path}`;
  url.search = queryAt < 0 ? "" : target.slice(queryAt);
  return url;
}

function writeError(
  req: NodeRequest,
  res: NodeResponse,
  error: unknown,
  onInternalError: (error: unknown, req: NodeRequest) => void,
): void {
  let status: number;
  let message: string;
  const headers: Record<string, string> = {};
  if (error instanceof RestError) {
    status = error.status;
    message = error.message;
    Object.assign(headers, error.headers);
  } else if (error instanceof BodyTooLarge) {
    status = 413;
    message = error.message;
    // The rest of the upload is not read: ask an HTTP/1.1 client to reconnect.
    if (req.httpVersionMajor === 1) headers["connection"] = "close";
  } else if (error instanceof ConnectError) {
    status = httpStatusOf(error.code);
    message = status === 500 ? "internal error" : error.rawMessage;
    // A rate-limited call says when to come back (see auth/rate-limited-verifier.ts).
    const retryAfter = error.metadata.get("retry-after");
    if (retryAfter !== null) headers["retry-after"] = retryAfter;
    if (status === 500) onInternalError(error, req);
  } else {
    status = 500;
    message = "internal error";
    onInternalError(error, req);
  }
  if (status === 401) headers["www-authenticate"] = "Bearer";
  if (res.headersSent) {
    res.destroy();
    return;
  }
  send(res, status, errorBody(status, message), headers);
}

function send(res: NodeResponse, status: number, body: unknown, headers: Record<string, string>): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(payload),
    "cache-control": "no-store",
  });
  res.end(payload);
}

/** Only JSON bodies: application/json, with no charset or charset=utf-8 (RFC 8259 §8.1). */
function checkJsonMediaType(contentType: string | undefined): void {
  const [type, ...params] = (contentType ?? "").split(";").map((p) => p.trim().toLowerCase());
  const charsetOk = params.every((p) => p === "" || p === "charset=utf-8" || p === 'charset="utf-8"');
  if (type !== "application/json" || !charsetOk) {
    throw new RestError(415, "Content-Type must be application/json");
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function parseJson(body: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw invalid("request body is not valid UTF-8");
  }
  if (text.trim() === "") throw invalid("request body must be a JSON object");
  try {
    return JSON.parse(text);
  } catch {
    throw invalid("request body is not valid JSON");
  }
}

function header(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

function requestHeaders(req: NodeRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(":") || value === undefined) continue;
    try {
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    } catch {
      // A header value fetch's Headers refuses is not one a handler needs.
    }
  }
  return headers;
}

