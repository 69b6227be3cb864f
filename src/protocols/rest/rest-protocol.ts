import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import { headerValues, singleHeader, type NodeRequest, type NodeResponse } from "../../http/node-http.js";
import { HttpRefusal } from "../../http/http-refusal.js";
import { pathOf } from "../../http/http-route.js";
import { BodyTooLarge, ClientGone, readBody } from "../../http/read-body.js";
import { errorReplyOf, writeError, writeJson } from "../../http/write-json.js";
import type { Pipeline } from "../../pipeline/pipeline.js";
import type { Procedure } from "../../pipeline/procedure.js";
import { idempotentReplayedHeader, type RequestContext } from "../../http/request-context.js";
import { invalid } from "../../rules/invalid.js";
import { decodeRestJson, type FieldAdapters } from "../decode-json.js";
import { parseJsonBody } from "../json-body.js";
import { decodeRestQuery } from "./decode-query.js";
import type { RestEncoder, RestEncoders } from "./encode-json.js";
import type { RestRoute, RouteTable } from "./route-table.js";

export interface RestProtocolOptions {
  routes: RouteTable;
  /** The procedure behind each route's RPC, by path ("/<service>/<method>"). */
  procedures: ReadonlyMap<string, Procedure>;
  pipeline: Pipeline;
  encoders: RestEncoders;
  /** Mount point, e.g. "/v1"; "" mounts at the root. */
  basePath: string;
  maxBodyBytes: number;
  adapters?: FieldAdapters;
}

/** What serving one route needs, worked out once at start-up. */
interface CompiledRoute {
  procedure: Procedure;
  input: DescMessage;
  encode: RestEncoder;
  /**
   * Create methods (AIP-133) answer 201 unless the create was a replay, and so
   * does a roll, which makes a new API key (issue 23, §2); other POSTs
   * (custom methods, AIP-136) 200.
   */
  creates: boolean;
  /** Then Location is this + the new id, when an item route exists. */
  locationPrefix: string | undefined;
  /** Whether the response can carry nextPageToken (then a Link header names the next page). */
  paged: boolean;
}

/**
 * RestProtocol serves the REST API as one more protocol in front of the
 * procedures (the Vanguard design): the dispatcher has matched the route;
 * this decodes path, query and body into the request message, runs it
 * through the pipeline and encodes the result straight to the contract's
 * JSON. Checks run in the contract's order: route, key, media type, size, body.
 */
export interface RestProtocol {
  serve(req: NodeRequest, res: NodeResponse, context: RequestContext, route: RestRoute, pathValues: Record<string, string>, query: string): Promise<void>;
}

export function createRestProtocol(options: RestProtocolOptions): RestProtocol {
  const { routes, basePath } = options;
  const compiled = new Map<RestRoute, CompiledRoute>();
  for (const route of routes.routes) {
    const procedure = options.procedures.get(`/${route.service.typeName}/${route.method.name}`);
    if (!procedure) throw new Error(`no procedure serves ${route.httpMethod} ${route.path.template}`);
    const item = routes.match("GET", `${route.path.template}/x`);
    // A resource created under another (a refund under its intent) is read at its own route: the GET of the same message by {id}.
    const reader = routes.routes.find((r) => r.httpMethod === "GET" && r.method.output === route.method.output && r.path.template.endsWith("/{id}"));
    compiled.set(route, {
      procedure,
      input: route.method.input,
      encode: options.encoders.encoderFor(route.method.output),
      creates: route.httpMethod === "POST" && /^(Create|Roll)[A-Z]/.test(route.method.name),
      locationPrefix:
        route.httpMethod !== "POST" ? undefined
        : item.kind === "found" ? `${basePath}${route.path.template}/`
        : reader && `${basePath}${reader.path.template.slice(0, -"{id}".length)}`,
      paged: route.method.output.fields.some((f) => f.name === "next_page_token"),
    });
  }

  async function readInput(req: NodeRequest, route: RestRoute, pathValues: Record<string, string>, query: string): Promise<Message> {
    let init: Record<string, unknown>;
    if (route.body === "*") {
      checkJsonMediaType(singleHeader(req, "content-type"));
      const body = await readBody(req, options.maxBodyBytes);
      init = decodeRestJson(route.method.input, parseJsonBody(body), options.adapters);
      if (query !== "") throw invalid(`unknown query parameter ${new URLSearchParams(query).keys().next().value ?? ""}`);
    } else {
      init = query === "" ? {} : decodeRestQuery(route.method.input, new URLSearchParams(query), route.path.variables);
    }
    for (const name in pathValues) {
      const field = route.method.input.fields.find((f) => f.name === name)!;
      // google.api.http maps to the body only the fields the path does not bind: a second value, maybe a different one, is refused.
      if (init[field.localName] !== undefined) throw invalid(`${field.jsonName} is given by the path; leave it out of the body`);
      init[field.localName] = pathValues[name];
    }
    return create(route.method.input, init as never) as Message;
  }

  return {
    async serve(req, res, context, route, pathValues, query) {
      const target = compiled.get(route)!;
      let output: Message;
      try {
        output = await options.pipeline.unary(
          context,
          target.procedure,
          { authorization: headerValues(req, "authorization"), keyFirst: true },
          () => readInput(req, route, pathValues, query),
        );
      } catch (error) {
        if (error instanceof ClientGone) {
          context.clientGone = true;
          return;
        }
        const reply = errorReplyOf(error);
        // The rest of an oversized upload is not read: ask an HTTP/1.1 client to reconnect.
        if (error instanceof BodyTooLarge && req.httpVersionMajor === 1) reply.headers["connection"] = "close";
        return writeError(res, context.requestId, reply);
      }
      const headers: Record<string, string> = { ...context.responseHeaders };
      let status = 200;
      if (target.creates && headers[idempotentReplayedHeader] !== "true") {
        status = 201;
        const id = (output as unknown as { id?: unknown }).id;
        if (target.locationPrefix !== undefined && typeof id === "string") headers["location"] = target.locationPrefix + encodeURIComponent(id);
      }
      if (target.paged) {
        const next = (output as unknown as { nextPageToken?: string }).nextPageToken;
        if (next) {
          const params = new URLSearchParams(query);
          params.set("pageToken", next);
          headers["link"] = `<${pathOf(req.url)}?${params.toString()}>; rel="next"`;
        }
      }
      writeJson(res, context.requestId, status, target.encode(output), headers);
    },
  };
}

/** Only JSON bodies: application/json, with no charset or charset=utf-8 (RFC 8259 §8.1). */
function checkJsonMediaType(contentType: string | undefined): void {
  if (contentType === "application/json") return;
  const [type, ...params] = (contentType ?? "").split(";").map((p) => p.trim().toLowerCase());
  const charsetOk = params.every((p) => p === "" || p === "charset=utf-8" || p === 'charset="utf-8"');
  if (type !== "application/json" || !charsetOk) throw new HttpRefusal(415, "Content-Type must be application/json");
}
