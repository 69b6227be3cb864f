/** SettlementAccountRecord is a merchant's payout bank account (§2.4). */
export interface SettlementAccountRecord {
  id: string;
  merchantId: string;
  /** The mode of the key that registered it (issue 23, §1); a split names an account of its intent's mode. */
  livemode: boolean;
  accountName: string;
  /** Ten-digit NUBAN. */
  accountNumber: string;
  bankName: string;
  bankCode: string;
  createdAt: Date;
  updatedAt: Date;
}
