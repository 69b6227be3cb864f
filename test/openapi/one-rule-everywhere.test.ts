import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clone, create, createFileRegistry, getExtension, setExtension, type DescFile, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { field as fieldRules, type FieldRules } from "../../gen/payments/rules/v1/rules_pb.js";
import { file_payments_v2_events } from "../../gen/payments/v2/events_pb.js";
import { file_payments_v2_payment_intent } from "../../gen/payments/v2/payment_intent_pb.js";
import { file_payments_v2_settlement_account } from "../../gen/payments/v2/settlement_account_pb.js";
import { file_payments_v2_shapes } from "../../gen/payments/v2/shapes_pb.js";
import { file_payments_v2_webhook_endpoints } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import { createRequestChecker } from "../../src/rules/request-checker.js";
import { createRuleReader } from "../../src/rules/rule-reader.js";
import { generateRestOpenApi, restJsonModule } from "../../scripts/protoc-gen-rest/generate.js";

/** The API's files, and the shapes their fields name. */
const apiFiles = [file_payments_v2_payment_intent, file_payments_v2_settlement_account, file_payments_v2_events, file_payments_v2_webhook_endpoints, file_payments_v2_shapes];

/** Every file the API's files need, as FileDescriptorProtos to edit. */
function descriptorProtos(): FileDescriptorProto[] {
  const seen = new Map<string, FileDescriptorProto>();
  const visit = (file: DescFile) => {
    if (seen.has(file.proto.name)) return;
    for (const dependency of file.dependencies) visit(dependency);
    seen.set(file.proto.name, clone(FileDescriptorProtoSchema, file.proto));
  };
  for (const file of apiFiles) visit(file);
  return [...seen.values()];
}

/** A registry of the API's descriptors, with edit applied to the rules of one shape first. */
function registryWith(shape: string, edit: (rules: FieldRules) => void): FileRegistry {
  const protos = descriptorProtos();
  const shapes = protos.find((file) => file.name === "payments/v2/shapes.proto")!.messageType.find((m) => m.name === "Shapes")!;
  const options = shapes.field.find((f) => f.name === shape)!.options!;
  const rules = getExtension(options, fieldRules);
  edit(rules);
  setExtension(options, fieldRules, rules);
  return createFileRegistry(create(FileDescriptorSetSchema, { file: protos }));
}

/** What one registry makes: the checker, the OpenAPI part and the REST JSON types. */
async function derived(registry: FileRegistry) {
  const extension = registry.getExtension("payments.rules.v1.field")!;
  const checker = createRequestChecker({ rules: createRuleReader({ extension, registry }) });
  const files = apiFiles.map((file) => registry.getFile(file.proto.name)!);
  const openApi = generateRestOpenApi(registry, files, () => undefined);
  return { checker, openApi, types: await restJsonModule(openApi) };
}

/** The checker's answer to a request message of the registry, as "accepted" or the 400 message. */
function answer(registry: FileRegistry, checker: ReturnType<typeof createRequestChecker>, typeName: string, init: Record<string, unknown>): string {
  const schema = registry.getMessage(typeName)!;
  try {
    checker.checkFor(schema)(create(schema, init as never));
    return "accepted";
  } catch (error) {
    return (error as Error & { rawMessage: string }).rawMessage;
  }
}

const pageSizeParameter = (openApi: { paths: Record<string, Record<string, { parameters: { name: string; schema: object }[] }>> }) =>
  openApi.paths["/v2/events"]!["get"]!.parameters.find((p) => p.name === "pageSize")!.schema;

// Issue 18, "Done when": a rule changed in one proto option changes the validation, its message, the OpenAPI
// schema and the REST types, with no other edit. Here the option is changed in the descriptors themselves, and
// the checker, the document's part and the types are made from them as `npm run generate` and the start do.
describe("one proto option, and everything derived from it", () => {
  it("page_size lte 100 → 80: the check, its message and the parameter's schema follow", async () => {
    const before = registryWith("page_size", () => {});
    const after = registryWith("page_size", (rules) => {
      if (rules.type.case === "int32") rules.type.value.lte = 80;
    });
    const [was, now] = [await derived(before), await derived(after)];
    for (const typeName of ["payments.v2.ListEventsRequest", "payments.v2.ListPaymentIntentsRequest", "payments.v2.ListSettlementAccountsRequest"]) {
      assert.equal(answer(before, was.checker, typeName, { pageSize: 90 }), "accepted");
      assert.equal(answer(after, now.checker, typeName, { pageSize: 90 }), "pageSize must be an integer from 1 to 80");
      assert.equal(answer(after, now.checker, typeName, { pageSize: 80 }), "accepted");
    }
    assert.deepEqual(pageSizeParameter(was.openApi as never), { type: "integer", minimum: 1, maximum: 100, default: 50 });
    assert.deepEqual(pageSizeParameter(now.openApi as never), { type: "integer", minimum: 1, maximum: 80, default: 50 });
  });

  it("a status added to payment_intent_status: the filter takes it, the schema lists it, the REST type has it", async () => {
    const before = registryWith("payment_intent_status", () => {});
    const after = registryWith("payment_intent_status", (rules) => {
      if (rules.type.case === "string") rules.type.value.in.push("refunded");
    });
    const [was, now] = [await derived(before), await derived(after)];
    const typeName = "payments.v2.ListPaymentIntentsRequest";
    assert.equal(answer(before, was.checker, typeName, { status: "refunded" }), "status must be one of pending, processing, requires_action, successful, failed, expired, cancelled");
    assert.equal(answer(after, now.checker, typeName, { status: "refunded" }), "accepted");
    assert.equal(answer(after, now.checker, typeName, { status: "paid" }), "status must be one of pending, processing, requires_action, successful, failed, expired, cancelled, refunded");
    const statusSchema = (openApi: { components: { schemas: Record<string, unknown> } }) => openApi.components.schemas["PaymentIntentStatus"];
    assert.deepEqual(statusSchema(was.openApi), { type: "string", enum: ["pending", "processing", "requires_action", "successful", "failed", "expired", "cancelled"] });
    assert.deepEqual(statusSchema(now.openApi), { type: "string", enum: ["pending", "processing", "requires_action", "successful", "failed", "expired", "cancelled", "refunded"] });
    const union = (types: string) => /PaymentIntentStatus: ([^;]+);/.exec(types)?.[1];
    assert.equal(union(was.types), '"pending" | "processing" | "requires_action" | "successful" | "failed" | "expired" | "cancelled"');
    assert.equal(union(now.types), '"pending" | "processing" | "requires_action" | "successful" | "failed" | "expired" | "cancelled" | "refunded"');
  });
});
