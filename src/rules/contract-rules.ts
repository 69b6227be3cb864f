import { createRegistry } from "@bufbuild/protobuf";
import { field } from "../../gen/payments/rules/v1/rules_pb.js";
import { file_payments_v2_shapes } from "../../gen/payments/v2/shapes_pb.js";
import { createRuleReader, type RuleReader } from "./rule-reader.js";

/** createContractRuleReader reads the rules of this service's protos, as generated into gen/. */
export function createContractRuleReader(): RuleReader {
  return createRuleReader({ extension: field, registry: createRegistry(file_payments_v2_shapes) });
}
