import { SettlementAccountService } from "../../gen/payments/v2/settlement_account_pb.js";
import { defineProcedures, type Procedure } from "../pipeline/procedure.js";
import { settlementAccountMessage } from "../service/payment-intent-presenter.js";
import type { SettlementAccountService as SettlementAccountRules } from "../service/settlement-account-service.js";

/** createSettlementAccountProcedures adapts the service to its RPCs. */
export function createSettlementAccountProcedures(rules: SettlementAccountRules): Procedure[] {
  return defineProcedures(
    SettlementAccountService,
    {
      createSettlementAccount: async (request, call) => settlementAccountMessage(await rules.create(call.merchantId, request, call.livemode)),
      listSettlementAccounts: async (request, call) => {
        const page = await rules.list(call.merchantId, request, call.livemode);
        return { settlementAccounts: page.accounts.map(settlementAccountMessage), nextPageToken: page.nextPageToken };
      },
    },
    { requiresKey: true },
  );
}
