import { getOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { compilePathTemplate, type PathTemplate } from "./path-template.js";

/** RestRoute binds one HTTP method and path to one RPC (google.api.http). */
export interface RestRoute {
  readonly httpMethod: string;
  readonly path: PathTemplate;
  readonly service: DescService;
  readonly method: DescMethod;
  /** "*" when the whole request message is the JSON body; "" for no body. */
  readonly body: string;
}

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
  const routes: RestRoute[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (!include(method)) continue;
      const rule = getOption(method, http);
      if (rule.pattern.case === undefined) continue;
      if (rule.pattern.case === "custom") throw new Error(`${method.name}: custom HTTP patterns are not supported`);
      if (rule.body !== "" && rule.body !== "*") throw new Error(`${method.name}: only body "*" is supported`);
      if (rule.additionalBindings.length > 0) throw new Error(`${method.name}: additional_bindings are not supported`);
      const path = compilePathTemplate(rule.pattern.value);
      for (const variable of path.variables) {
        const field = method.input.fields.find((f) => f.name === variable);
        if (!field || field.fieldKind !== "scalar") throw new Error(`${method.name}: path variable {${variable}} is not a scalar field`);
      }
      routes.push({ httpMethod: rule.pattern.case.toUpperCase(), path, service, method, body: rule.body });
    }
  }
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
