import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { readHttpBindings, type HttpBinding } from "./http-bindings.js";

/** RestRoute binds one HTTP method and path to one RPC (google.api.http). */
export type RestRoute = HttpBinding;

/** RouteMatch is the outcome of routing one request. */
export type RouteMatch =
  | { kind: "found"; route: RestRoute; pathValues: Record<string, string>; template: string; allow: readonly string[] }
  | { kind: "method-not-allowed"; template: string; allow: readonly string[] }
  | { kind: "not-found" };

/** RouteTable answers which RPC serves a request, or why none does. */
export interface RouteTable {
  readonly routes: readonly RestRoute[];
  match(httpMethod: string, path: string): RouteMatch;
}

/**
 * createRouteTable compiles the google.api.http rules of the services' RPCs
 * once, at start-up, so the proto stays the single source of the REST
 * contract (as grpc-gateway and Vanguard do). Rules the gateway cannot serve
 * faithfully stop the start instead of failing requests later. include, when
 * given, leaves out the methods this instance does not serve (the test clock
 * without TEST_CLOCK), so their paths are 404 like any unknown path.
 */
export function createRouteTable(services: readonly DescService[], include: (method: DescMethod) => boolean = () => true): RouteTable {
  const routes = readHttpBindings(services, http, include);
  // The methods each template accepts (HEAD wherever GET is: RFC 9110 §9.3.2), for Allow.
  const allowByTemplate = new Map<string, string[]>();
  for (const route of routes) {
    const allow = allowByTemplate.get(route.path.template) ?? [];
    allow.push(route.httpMethod);
    if (route.httpMethod === "GET") allow.push("HEAD");
    allowByTemplate.set(route.path.template, allow);
  }
  return {
    routes,
    match(httpMethod, path) {
      let template: string | undefined;
      for (const route of routes) {
        const pathValues = route.path.match(path);
        if (!pathValues) continue;
        template = route.path.template;
        if (route.httpMethod === httpMethod) return { kind: "found", route, pathValues, template, allow: allowByTemplate.get(template)! };
      }
      return template === undefined ? { kind: "not-found" } : { kind: "method-not-allowed", template, allow: allowByTemplate.get(template)! };
    },
  };
}
