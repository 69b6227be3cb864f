import { createRegistry } from "@bufbuild/protobuf";
import { field } from "../../gen/payments/rules/v1/rules_pb.js";
import { file_payments_v2_events } from "../../gen/payments/v2/events_pb.js";
import { file_payments_v2_payment_intent } from "../../gen/payments/v2/payment_intent_pb.js";
import { file_payments_v2_settlement_account } from "../../gen/payments/v2/settlement_account_pb.js";
import { file_payments_v2_shapes, ShapesSchema } from "../../gen/payments/v2/shapes_pb.js";
import { file_payments_v2_test_helpers } from "../../gen/payments/v2/test_helpers_pb.js";
import { file_payments_v2_webhook_endpoints } from "../../gen/payments/v2/webhook_endpoints_pb.js";
import { createRequestChecker, type RequestChecker } from "./request-checker.js";
import { createRuleReader, type RuleReader } from "./rule-reader.js";
import { stringCheck } from "./value-checks.js";

const contractFiles = [
  file_payments_v2_payment_intent,
  file_payments_v2_settlement_account,
  file_payments_v2_events,
  file_payments_v2_webhook_endpoints,
  file_payments_v2_test_helpers,
];

/** createContractRuleReader reads the rules of this service's protos, as generated into gen/. */
export function createContractRuleReader(): RuleReader {
  return createRuleReader({ extension: field, registry: createRegistry(file_payments_v2_shapes) });
}

/**
 * createContractChecker is the checker of this service's requests, with the
 * check of every RPC's input compiled now: a rule that does not fit its field
 * stops the start, not the first request.
 */
export function createContractChecker(): RequestChecker {
  const checker = createRequestChecker({ rules: createContractRuleReader() });
  for (const file of contractFiles) for (const service of file.services) for (const method of service.methods) checker.checkFor(method.input);
  return checker;
}

/** shapeTest tells whether a string obeys a string shape of payments.v2.Shapes (its rules, without the message). */
export function shapeTest(name: string): (value: string) => boolean {
  const shape = ShapesSchema.fields.find((f) => f.name === name);
  const type = shape && createContractRuleReader().rulesOf(shape)?.type;
  if (type?.kind !== "string") throw new Error(`no string shape ${name}`);
  const check = stringCheck(type.rules);
  return (value) => check(value) === undefined;
}
