/**
 * formatNaira renders kobo as the customer reads it: 50000 → "₦500.00",
 * 123456789 → "₦1,234,567.89". Integer arithmetic only: no float touches money.
 */
export function formatNaira(kobo: bigint): string {
  const negative = kobo < 0n;
  const abs = negative ? -kobo : kobo;
  const naira = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const rest = (abs % 100n).toString().padStart(2, "0");
  return `${negative ? "-" : ""}₦${naira}.${rest}`;
}
