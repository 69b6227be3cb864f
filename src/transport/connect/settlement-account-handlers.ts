import type { ServiceImpl } from "@connectrpc/connect";
import { SettlementAccountService } from "../../../gen/payments/v2/settlement_account_pb.js";
import type { SettlementAccountService as SettlementAccountRules } from "../../service/settlement-account-service.js";
import { requirePrincipal } from "../principal-context.js";
import { settlementAccountToProto } from "../to-proto.js";

/** createSettlementAccountHandlers adapts the service to the generated RPC interface. */
export function createSettlementAccountHandlers(
  rules: SettlementAccountRules,
): ServiceImpl<typeof SettlementAccountService> {
  return {
    async createSettlementAccount(request, context) {
      return settlementAccountToProto(await rules.create(requirePrincipal(context).merchantId, request));
    },
    async listSettlementAccounts(_request, context) {
      const accounts = await rules.list(requirePrincipal(context).merchantId);
      return { settlementAccounts: accounts.map(settlementAccountToProto) };
    },
  };
}
