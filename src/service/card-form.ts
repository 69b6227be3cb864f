import { luhnValid } from "../lib/luhn.js";
import type { CardDetails } from "../processor/payment-processor.js";

/** CardForm is the card section of the checkout form, as posted. */
export interface CardForm {
  number: string;
  expiry: string;
  cvv: string;
}

/** A form error: which field, and what to tell the customer. */
export interface FieldError {
  field: "number" | "expiry" | "cvv";
  message: string;
}

/**
 * parseCardForm checks what the customer typed before anything is charged: a
 * mistyped number is a form error to fix, not a declined attempt. Spaces and
 * dashes in the number are ignored; the expiry is MM/YY or MM/YYYY and not in
 * the past; the CVV is three or four digits.
 */
export function parseCardForm(form: CardForm, now: Date): { card: CardDetails } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const number = form.number.replace(/[\s-]/g, "");
  if (!/^\d{12,19}$/.test(number) || !luhnValid(number)) {
    errors.push({ field: "number", message: "Enter a valid card number." });
  }
  const expiry = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(form.expiry);
  const month = expiry ? Number(expiry[1]) : 0;
  const year = expiry ? (expiry[2]!.length === 2 ? 2000 + Number(expiry[2]) : Number(expiry[2])) : 0;
  if (!expiry || month < 1 || month > 12) {
    errors.push({ field: "expiry", message: "Enter the expiry date as MM/YY." });
  } else if (year * 12 + month < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1) {
    errors.push({ field: "expiry", message: "This card has expired." });
  }
  if (!/^\d{3,4}$/.test(form.cvv.trim())) errors.push({ field: "cvv", message: "Enter the 3 or 4 digit CVV." });
  if (errors.length > 0) return { errors };
  return { card: { number, expiryMonth: month, expiryYear: year, cvv: form.cvv.trim() } };
}
