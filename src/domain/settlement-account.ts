/** SettlementAccountRecord is a merchant's payout bank account (§2.4). */
export interface SettlementAccountRecord {
  id: string;
  merchantId: string;
  accountName: string;
  /** Ten-digit NUBAN. */
  accountNumber: string;
  bankName: string;
  bankCode: string;
  createdAt: Date;
  updatedAt: Date;
}
