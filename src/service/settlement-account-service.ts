import { Code, ConnectError } from "@connectrpc/connect";
import type { CreateSettlementAccountRequest } from "../../gen/payments/v2/settlement_account_pb.js";
import type { SettlementAccountRecord } from "../domain/settlement-account.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { SettlementAccountStore } from "../store/settlement-account-store.js";
import { checkText, invalid } from "./field-rules.js";

/** SettlementAccountService registers and lists a merchant's payout accounts. */
export interface SettlementAccountService {
  create(merchantId: string, request: CreateSettlementAccountRequest): Promise<SettlementAccountRecord>;
  list(merchantId: string): Promise<SettlementAccountRecord[]>;
}

export interface SettlementAccountServiceDeps {
  accounts: SettlementAccountStore;
  clock: Clock;
  ids: IdGenerator;
}

/**
 * createSettlementAccountService validates accounts: a NUBAN is exactly ten
 * digits and a CBN bank or institution code three to six. The NUBAN check
 * digit is not verified: its algorithm differs between bank and microfinance
 * codes, and a wrong rejection would stop a merchant from being paid.
 */
export function createSettlementAccountService(deps: SettlementAccountServiceDeps): SettlementAccountService {
  return {
    async create(merchantId, request) {
      checkText("accountName", request.accountName, 100);
      if (!/^\d{10}$/.test(request.accountNumber)) throw invalid("accountNumber must be exactly 10 digits (NUBAN)");
      checkText("bankName", request.bankName, 100);
      if (!/^\d{3,6}$/.test(request.bankCode)) throw invalid("bankCode must be 3 to 6 digits");
      const now = deps.clock.now();
      const result = await deps.accounts.insert({
        id: deps.ids.settlementAccountId(),
        merchantId,
        accountName: request.accountName,
        accountNumber: request.accountNumber,
        bankName: request.bankName,
        bankCode: request.bankCode,
        createdAt: now,
        updatedAt: now,
      });
      if (!result.inserted) {
        throw new ConnectError(
          `account ${request.accountNumber} at bank ${request.bankCode} is already registered as ${result.existing.id}`,
          Code.AlreadyExists,
        );
      }
      return result.record;
    },

    list: (merchantId) => deps.accounts.listByMerchant(merchantId),
  };
}
