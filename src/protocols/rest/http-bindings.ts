import { getOption, type DescExtension, type DescMethod, type DescService } from "@bufbuild/protobuf";
import type { GenExtension } from "@bufbuild/protobuf/codegenv2";
import type { MethodOptions } from "@bufbuild/protobuf/wkt";
import type { HttpRule } from "../../../gen/google/api/http_pb.js";
import { compilePathTemplate, type PathTemplate } from "./path-template.js";

/** HttpBinding binds one HTTP method and path to one RPC (google.api.http). */
export interface HttpBinding {
  readonly httpMethod: string;
  readonly path: PathTemplate;
  readonly service: DescService;
  readonly method: DescMethod;
  /** "*" when the whole request message is the JSON body; "" for no body. */
  readonly body: string;
}

/**
 * readHttpBindings reads the google.api.http rules of the services' RPCs, in
 * order. Rules the gateway cannot serve faithfully (custom patterns, a body
 * other than "*", additional bindings, a path variable that is no scalar
 * field) throw, so they stop the start, the OpenAPI generator and the tests
 * instead of failing requests later. The extension is the google.api.http
 * one: the service's generated one, or the protoc plugin's from its request
 * (it must not read the gen/ it writes).
 */
export function readHttpBindings(services: readonly DescService[], extension: DescExtension, include: (method: DescMethod) => boolean = () => true): HttpBinding[] {
  const http = extension as GenExtension<MethodOptions, HttpRule>;
  const bindings: HttpBinding[] = [];
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
      bindings.push({ httpMethod: rule.pattern.case.toUpperCase(), path, service, method, body: rule.body });
    }
  }
  return bindings;
}
