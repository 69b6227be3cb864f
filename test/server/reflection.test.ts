import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { create, createFileRegistry, fromBinary, hasOption, type MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { http } from "../../gen/google/api/annotations_pb.js";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { startTestServer, type TestServer } from "../support/test-server.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

const servedServices = [
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
  "payments.v2.EventService",
  "payments.v2.PaymentIntentService",
  "payments.v2.RefundService",
  "payments.v2.SettlementAccountService",
  "payments.v2.WebhookEndpointService",
];

type Request = MessageInitShape<typeof v1.ServerReflectionRequestSchema>["messageRequest"];

/** ask sends requests on one reflection stream (as grpcurl does) and returns the responses in order. */
async function ask(server: TestServer, requests: Request[], version: typeof v1 | typeof v1alpha = v1) {
  const client = createClient(version.ServerReflection as typeof v1.ServerReflection, createGrpcTransport({ baseUrl: server.url }));
  async function* input() {
    for (const messageRequest of requests) yield create(v1.ServerReflectionRequestSchema, { host: "localhost", messageRequest });
  }
  const responses: v1.ServerReflectionResponse[] = [];
  for await (const response of client.serverReflectionInfo(input())) responses.push(response);
  return responses;
}

function filesOf(response: v1.ServerReflectionResponse): FileDescriptorProto[] {
  assert.equal(response.messageResponse.case, "fileDescriptorResponse", JSON.stringify(response.messageResponse));
  return response.messageResponse.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
}

/** inDependencyOrder puts every file after its imports, as a FileDescriptorSet needs; it fails on a missing import. */
function inDependencyOrder(files: FileDescriptorProto[]): FileDescriptorProto[] {
  const ordered: FileDescriptorProto[] = [];
  const visit = (name: string) => {
    if (ordered.some((f) => f.name === name)) return;
    const file = files.find((f) => f.name === name);
    assert.ok(file, `reflection did not send ${name}`);
    file.dependency.forEach(visit);
    ordered.push(file);
  };
  files.forEach((f) => visit(f.name));
  return ordered;
}

describe("gRPC server reflection", () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  for (const [name, version] of [["v1", v1], ["v1alpha", v1alpha]] as const) {
    it(`lists the served services over ${name}, without a key`, async () => {
      const [response] = await ask(server, [{ case: "listServices", value: "" }], version);
      assert.equal(response!.messageResponse.case, "listServicesResponse");
      const names = response!.messageResponse.value!.service.map((s: { name: string }) => s.name);
      assert.deepEqual(names.sort(), servedServices);
      assert.equal(response!.validHost, "localhost");
      assert.equal(response!.originalRequest?.messageRequest.case, "listServices");
    });
  }

  it("resolves a service symbol to its file and every import, enough to rebuild the service", async () => {
    const [response] = await ask(server, [{ case: "fileContainingSymbol", value: "payments.v2.PaymentIntentService" }]);
    const files = filesOf(response!);
    assert.equal(files[0]!.name, "payments/v2/payment_intent.proto");
    assert.ok(files.some((f) => f.name === "google/api/annotations.proto"));
    assert.ok(files.some((f) => f.name === "google/protobuf/descriptor.proto"));
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: inDependencyOrder(files) }));
    const service = registry.getService("payments.v2.PaymentIntentService");
    assert.deepEqual(service?.methods.map((m) => m.name).sort(), [
      "CreatePaymentIntent",
      "DeletePaymentIntent",
      "GetPaymentIntent",
      "ListPaymentIntents",
    ]);
    // The REST mapping survives: every method keeps its google.api.http option.
    assert.ok(service!.methods.every((m) => hasOption(m, http)));
  });

  const symbols: { symbol: string; file: string }[] = [
    { symbol: "payments.v2.PaymentIntentService.CreatePaymentIntent", file: "payments/v2/payment_intent.proto" },
    { symbol: "payments.v2.SettlementAccountService", file: "payments/v2/settlement_account.proto" },
    { symbol: "grpc.health.v1.HealthCheckResponse.ServingStatus", file: "health/v1/health.proto" },
    { symbol: "grpc.health.v1.HealthCheckRequest.service", file: "health/v1/health.proto" },
    { symbol: "grpc.reflection.v1.ServerReflection", file: "grpc/reflection/v1/reflection.proto" },
  ];
  for (const { symbol, file } of symbols) {
    it(`finds ${symbol} in ${file}`, async () => {
      const [response] = await ask(server, [{ case: "fileContainingSymbol", value: symbol }]);
      assert.equal(filesOf(response!)[0]!.name, file);
    });
  }

  it("answers file_by_filename, and sends each import once per stream", async () => {
    const [first, second] = await ask(server, [
      { case: "fileByFilename", value: "payments/v2/payment_intent.proto" },
      { case: "fileByFilename", value: "payments/v2/settlement_account.proto" },
    ]);
    const firstNames = filesOf(first!).map((f) => f.name);
    const secondNames = filesOf(second!).map((f) => f.name);
    assert.equal(firstNames[0], "payments/v2/payment_intent.proto");
    assert.ok(firstNames.includes("google/api/annotations.proto"));
    assert.deepEqual(secondNames, ["payments/v2/settlement_account.proto"], "imports already sent are not repeated");
  });

  it("answers unknown names with a NOT_FOUND error response and keeps the stream open", async () => {
    const responses = await ask(server, [
      { case: "fileContainingSymbol", value: "payments.v2.Nope" },
      { case: "fileByFilename", value: "nope.proto" },
      { case: "listServices", value: "" },
    ]);
    assert.deepEqual(
      responses.slice(0, 2).map((r) => r.messageResponse.case === "errorResponse" && r.messageResponse.value.errorCode),
      [5, 5],
    );
    assert.equal(responses[2]!.messageResponse.case, "listServicesResponse");
  });

  it("lists extension numbers of a type: google.api.http on MethodOptions", async () => {
    const [numbers, extension] = await ask(server, [
      { case: "allExtensionNumbersOfType", value: "google.protobuf.MethodOptions" },
      { case: "fileContainingExtension", value: { containingType: "google.protobuf.MethodOptions", extensionNumber: 72295728 } },
    ]);
    assert.equal(numbers!.messageResponse.case, "allExtensionNumbersResponse");
    assert.ok(numbers!.messageResponse.value.extensionNumber.includes(72295728));
    assert.equal(filesOf(extension!)[0]!.name, "google/api/annotations.proto");
  });

  it("lets buf curl list every method without the proto files", async () => {
    const run = promisify(execFile);
    const { stdout } = await run(
      `${repoRoot}node_modules/.bin/buf`,
      ["curl", "--reflect", "--protocol", "grpc", "--http2-prior-knowledge", "--list-methods", server.url],
      { cwd: "/" },
    );
    const methods = stdout.trim().split("\n");
    assert.ok(methods.includes("payments.v2.PaymentIntentService/CreatePaymentIntent"), stdout);
    assert.ok(methods.includes("payments.v2.SettlementAccountService/ListSettlementAccounts"), stdout);
    assert.ok(methods.includes("grpc.health.v1.Health/Check"), stdout);
  });
});
