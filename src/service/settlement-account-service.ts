import { Code, ConnectError } from "@connectrpc/connect";
import type { CreateSettlementAccountRequest, ListSettlementAccountsRequest } from "../../gen/payments/v2/settlement_account_pb.js";
import type { SettlementAccountRecord } from "../domain/settlement-account.js";
import type { Clock } from "../lib/clock.js";
import type { IdGenerator } from "../lib/ids.js";
import type { SettlementAccountStore } from "../store/settlement-account-store.js";
import { invalid } from "../rules/invalid.js";
import { modeName } from "./mode-scope.js";
import type { PageTokenCodec } from "./page-token.js";

/** SettlementAccountService registers and lists a merchant's payout accounts. */
export interface SettlementAccountService {
  create(merchantId: string, request: CreateSettlementAccountRequest, livemode: boolean): Promise<SettlementAccountRecord>;
  /** One page of the mode's accounts, newest first; nextPageToken is "" on the last page. */
  list(merchantId: string, request: ListSettlementAccountsRequest, livemode: boolean): Promise<{ accounts: SettlementAccountRecord[]; nextPageToken: string }>;
}

export interface SettlementAccountServiceDeps {
  accounts: SettlementAccountStore;
  pageTokens: PageTokenCodec;
  clock: Clock;
  ids: IdGenerator;
  /** Most accounts one merchant may register; default maxSettlementAccounts. */
  maxPerMerchant?: number;
}

/**
 * The most settlement accounts a merchant may register: far more than any
 * business pays out to, and few enough that one merchant cannot fill the
 * store or make every list slow for others.
 */
export const maxSettlementAccounts = 1000;

/**
 * createSettlementAccountService registers accounts (the fields' rules, a
 * ten-digit NUBAN and a three-to-six-digit bank code, ran in the pipeline)
 * up to the per-merchant cap, each bank account once.
 */
export function createSettlementAccountService(deps: SettlementAccountServiceDeps): SettlementAccountService {
  const maxPerMerchant = deps.maxPerMerchant ?? maxSettlementAccounts;
  return {
    async create(merchantId, request, livemode) {
      const now = deps.clock.now();
      const result = await deps.accounts.insert({
        id: deps.ids.settlementAccountId(livemode),
        merchantId,
        livemode,
        accountName: request.accountName,
        accountNumber: request.accountNumber,
        bankName: request.bankName,
        bankCode: request.bankCode,
        createdAt: now,
        updatedAt: now,
      }, { maxPerMerchant });
      if (!result.inserted && "full" in result) {
        throw new ConnectError(
          `a merchant may register at most ${maxPerMerchant} settlement accounts; this one has reached that`,
          Code.FailedPrecondition,
        );
      }
      if (!result.inserted) {
        throw new ConnectError(
          `account ${request.accountNumber} at bank ${request.bankCode} is already registered as ${result.existing.id}`,
          Code.AlreadyExists,
        );
      }
      return result.record;
    },

    async list(merchantId, request, livemode) {
      // In range, its default filled in: the field rules ran in the pipeline.
      const pageSize = request.pageSize!;
      const scope = { merchantId, query: ["settlement_accounts", modeName(livemode)] };
      let after;
      if (request.pageToken !== "") {
        after = deps.pageTokens.decode(request.pageToken, scope);
        if (!after) throw invalid("pageToken is not valid for this query");
      }
      const rows = await deps.accounts.listByMerchant({ merchantId, livemode, limit: pageSize + 1, after });
      const accounts = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
      const last = accounts[accounts.length - 1];
      return { accounts, nextPageToken: rows.length > pageSize && last ? deps.pageTokens.encode(last, scope) : "" };
    },
  };
}
