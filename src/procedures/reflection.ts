import {
  createRegistry,
  toBinary,
  type DescFile,
  type DescService,
  type MessageInitShape,
  type Registry,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { defineProcedures, type Procedure, type ServiceImpl } from "../pipeline/procedure.js";

type ReflectionRequest = Omit<v1.ServerReflectionRequest, "$typeName" | "$unknown">;
type ReflectionResponseInit = MessageInitShape<typeof v1.ServerReflectionResponseSchema>;

/**
 * createReflectionServices implements gRPC server reflection
 * (https://github.com/grpc/grpc/blob/master/doc/server-reflection.md), both
 * grpc.reflection.v1 and the v1alpha that older grpcurl and buf curl ask
 * first, so tools can call the API without its proto files. It answers from
 * the generated file descriptors: list_services names the given services and
 * reflection itself; file_by_filename, file_containing_symbol and
 * file_containing_extension return the file with every import not yet sent on
 * this stream; all_extension_numbers_of_type lists known extensions.
 */
export function createReflectionProcedures(services: readonly DescService[]): Procedure[] {
  const served = [...services, v1.ServerReflection, v1alpha.ServerReflection];
  // Keyed by the proto file name ("payments/v2/payment_intent.proto"), as clients ask.
  const files = new Map<string, DescFile>();
  const addFile = (file: DescFile): void => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(addFile);
  };
  served.forEach((service) => addFile(service.file));
  const registry = createRegistry(...files.values());
  const serviceNames = served.map((service) => service.typeName);

  const answer = (request: ReflectionRequest, sent: Set<string>): ReflectionResponseInit["messageResponse"] => {
    const { messageRequest } = request;
    switch (messageRequest.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: serviceNames.map((name) => ({ name })) } };
      case "fileByFilename": {
        const name = messageRequest.value;
        const file = files.get(name) ?? files.get(fileAliases[name] ?? "");
        return file ? fileResponse(file, sent, name) : notFound(`file ${name} is not known`);
      }
      case "fileContainingSymbol": {
        const file = fileOfSymbol(registry, messageRequest.value);
        return file ? fileResponse(file, sent) : notFound(`symbol ${messageRequest.value} is not known`);
      }
      case "fileContainingExtension": {
        const { containingType, extensionNumber } = messageRequest.value;
        const extendee = registry.getMessage(containingType);
        const extension = extendee ? registry.getExtensionFor(extendee, extensionNumber) : undefined;
        return extension
          ? fileResponse(extension.file, sent)
          : notFound(`extension ${extensionNumber} of ${containingType} is not known`);
      }
      case "allExtensionNumbersOfType": {
        const baseTypeName = messageRequest.value;
        if (!registry.getMessage(baseTypeName)) return notFound(`type ${baseTypeName} is not known`);
        const extensionNumber = [...registry]
          .filter((desc) => desc.kind === "extension" && desc.extendee.typeName === baseTypeName)
          .map((desc) => (desc.kind === "extension" ? desc.number : 0));
        return { case: "allExtensionNumbersResponse", value: { baseTypeName, extensionNumber } };
      }
      default:
        return { case: "errorResponse", value: { errorCode: Code.InvalidArgument, errorMessage: "empty reflection request" } };
    }
  };

  // The stream is answered request by request, in order; files already sent
  // on it are not repeated (the client has them), except the one asked for.
  async function* serve(requests: AsyncIterable<ReflectionRequest>): AsyncGenerator<ReflectionResponseInit> {
    const sent = new Set<string>();
    for await (const request of requests) {
      yield { validHost: request.host, originalRequest: request, messageResponse: answer(request, sent) };
    }
  }

  return [
    ...defineProcedures(v1.ServerReflection, { serverReflectionInfo: serve } as ServiceImpl<typeof v1.ServerReflection>, {
      requiresKey: false,
    }),
    // v1alpha has the very same messages under another package.
    ...defineProcedures(v1alpha.ServerReflection, { serverReflectionInfo: serve } as unknown as ServiceImpl<typeof v1alpha.ServerReflection>, {
      requiresKey: false,
    }),
  ];

  function fileResponse(file: DescFile, sent: Set<string>, askedAs?: string): ReflectionResponseInit["messageResponse"] {
    const out: DescFile[] = [];
    const visit = (f: DescFile, requested: boolean): void => {
      if (!requested && sent.has(f.proto.name)) return;
      sent.add(f.proto.name);
      out.push(f);
      for (const dependency of f.dependencies) visit(dependency, false);
    };
    visit(file, true);
    const encode = (f: DescFile) =>
      // A file asked for by its standard alias is answered under that name.
      f === file && askedAs !== undefined && askedAs !== f.proto.name
        ? toBinary(FileDescriptorProtoSchema, { ...f.proto, name: askedAs })
        : toBinary(FileDescriptorProtoSchema, f.proto);
    return { case: "fileDescriptorResponse", value: { fileDescriptorProto: out.map(encode) } };
  }
}

/**
 * The standard names of files this build carries under another name: the
 * grpc-health-check package names the health proto health/v1/health.proto,
 * while clients (grpcurl, grpc-go's resolver) ask for the name gRPC's own
 * repository gives it.
 */
const fileAliases: Record<string, string> = { "grpc/health/v1/health.proto": "health/v1/health.proto" };

function notFound(message: string): ReflectionResponseInit["messageResponse"] {
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: message } };
}

/**
 * fileOfSymbol finds the file declaring a fully-qualified name: a message,
 * enum, service or extension, or a member of one (method, field, oneof, enum
 * value), as protoc's descriptor pool resolves names.
 */
function fileOfSymbol(registry: Registry, symbol: string): DescFile | undefined {
  const direct = registry.get(symbol);
  if (direct) return direct.file;
  const dot = symbol.lastIndexOf(".");
  if (dot < 0) return undefined;
  const parentName = symbol.slice(0, dot);
  const member = symbol.slice(dot + 1);
  const parent = registry.get(parentName);
  if (parent?.kind === "service" && parent.methods.some((m) => m.name === member)) return parent.file;
  if (parent?.kind === "message" && (parent.fields.some((f) => f.name === member) || parent.oneofs.some((o) => o.name === member))) {
    return parent.file;
  }
  // Enum values are scoped beside their enum, not inside it.
  for (const desc of registry) {
    if (desc.kind !== "enum") continue;
    const scope = desc.typeName.slice(0, Math.max(0, desc.typeName.lastIndexOf(".")));
    if (scope === parentName && desc.values.some((v) => v.name === member)) return desc.file;
  }
  return undefined;
}
