/** Principal is the authenticated caller: the merchant that owns the API key. */
export interface Principal {
  merchantId: string;
  merchantName: string;
}
