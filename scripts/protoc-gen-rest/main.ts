// protoc-gen-rest: the protoc plugin `npm run generate` runs (buf.gen.yaml),
// beside protoc-gen-es, to write the REST API's description into gen/rest/
// (generate.ts says what). A plugin rather than a build from gen/ at start:
// the generated code keeps no comments (protoc-gen-es strips source info),
// and the descriptions come from them; and the files are committed, so a
// change to the published contract shows in review. `npm run check:gen`
// fails when they are stale.
//
// It runs as protoplugin's runNodeJs does, but awaits: openapi-typescript is
// asynchronous.
import { create, createFileRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, CodeGeneratorResponse_Feature, CodeGeneratorResponseSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { generateRestFiles } from "./generate.js";

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

try {
  const request = fromBinary(CodeGeneratorRequestSchema, await readStdin());
  const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: request.protoFile }));
  const files = request.fileToGenerate.map((name) => registry.getFile(name)!);
  // buf runs the plugin once per input (buf.gen.yaml): only ours has REST routes.
  const generated = registry.getExtension("google.api.http") ? await generateRestFiles(registry, files) : [];
  const response = create(CodeGeneratorResponseSchema, {
    supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
    file: generated.map(({ name, content }) => ({ name, content })),
  });
  process.stdout.write(toBinary(CodeGeneratorResponseSchema, response));
} catch (error) {
  process.stderr.write(`protoc-gen-rest: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
}
