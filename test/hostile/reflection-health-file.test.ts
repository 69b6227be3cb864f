import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

/** One reflection stream asking for one file by name; the first response. */
async function fileByFilename(server: TestServer, name: string, version: typeof v1 | typeof v1alpha) {
  const client = createClient(version.ServerReflection as typeof v1.ServerReflection, createGrpcTransport({ baseUrl: server.url }));
  async function* input() {
    yield create(v1.ServerReflectionRequestSchema, { host: "localhost", messageRequest: { case: "fileByFilename", value: name } });
  }
  for await (const response of client.serverReflectionInfo(input())) return response;
  assert.fail("no reflection response");
}

// Fails on e1d5b66: reflection knew the health proto only as health/v1/health.proto and answered this name "not known"
// (the last case pins what README says of the package's own name).
describe("reflection of the standard health file name", () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ store: "memory" });
  });
  after(() => server.close());

  for (const [name, version] of [["v1", v1], ["v1alpha", v1alpha]] as const) {
    it(`answers file_by_filename grpc/health/v1/health.proto over ${name} with the health file under that name`, async () => {
      const response = await fileByFilename(server, "grpc/health/v1/health.proto", version);
      assert.equal(response.messageResponse.case, "fileDescriptorResponse", JSON.stringify(response.messageResponse));
      const files = response.messageResponse.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
      assert.equal(files[0]!.name, "grpc/health/v1/health.proto");
      assert.equal(files[0]!.package, "grpc.health.v1");
      // A client can build a registry from it and find the service it asked about.
      const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: files }));
      const health = registry.getService("grpc.health.v1.Health");
      assert.ok(health?.methods.some((m) => m.name === "Check"), "grpc.health.v1.Health/Check is described");
    });
  }

  it("still answers the package's own name, and unknown names NotFound", async () => {
    const own = await fileByFilename(server, "health/v1/health.proto", v1);
    assert.equal(own.messageResponse.case, "fileDescriptorResponse");
    const unknown = await fileByFilename(server, "grpc/health/v2/health.proto", v1);
    assert.equal(unknown.messageResponse.case, "errorResponse");
    assert.equal(unknown.messageResponse.value.errorCode, 5);
  });
});
