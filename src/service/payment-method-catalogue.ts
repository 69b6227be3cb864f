import { paystackName } from "../processor/paystack/paystack-name.js";
import { shapeTest } from "../rules/contract-rules.js";

/** PaymentMethodView is a catalogue entry as the API shows it (§2.2). */
export interface PaymentMethodView {
  id: string;
  type: string;
  attributes: { name: string }[];
}

/**
 * PaymentMethodCatalogue is the set of methods a payment intent may allow:
 * the built-in card, bank_transfer and ussd, plus the third-party processors
 * an operator enables (§4.1 "name of a third-party payment processor").
 */
export interface PaymentMethodCatalogue {
  /** Every enabled method name, built-ins first. */
  readonly names: readonly string[];
  has(name: string): boolean;
  /**
   * Describes a method for responses. A name that is no longer enabled (an
   * operator removed a processor) still renders, with no attributes.
   */
  describe(name: string): PaymentMethodView;
  /** A processor this service has an adapter for, but whose settings are unset (PAYSTACK_SECRET_KEY). */
  notConfigured(name: string): boolean;
  /** Whether an intent that allows this method may carry settlement splits. */
  takesSplits(name: string): boolean;
}

const builtIns: Record<string, string[]> = {
  card: ["Visa", "Mastercard", "Verve"],
  bank_transfer: ["Virtual account"],
  ussd: ["USSD code"],
};

/**
 * The processors this service has a real adapter for: offered only when
 * configured, and whether each can take settlement splits. Paystack's
 * subaccounts are not mapped from our settlement accounts yet
 * (docs/payments.md, "Collecting with Paystack").
 */
const adapters: Record<string, { splits: boolean }> = {
  [paystackName]: { splits: false },
};

/**
 * isPaymentMethodName: a processor's name is a payment method's name as the
 * proto's payment_method_name shape says (lower-case, so ids stay stable and
 * URL-safe), or no create request could name it.
 */
export const isPaymentMethodName = shapeTest("payment_method_name");

/**
 * createPaymentMethodCatalogue builds the catalogue. Ids are "pm_" + name, so
 * a method keeps its id across restarts and instances.
 */
export function createPaymentMethodCatalogue(processors: readonly string[]): PaymentMethodCatalogue {
  const entries = new Map<string, PaymentMethodView>();
  for (const [name, attributes] of Object.entries(builtIns)) {
    entries.set(name, { id: `pm_${name}`, type: name, attributes: attributes.map((a) => ({ name: a })) });
  }
  for (const name of processors) {
    if (!isPaymentMethodName(name) || entries.has(name)) {
      throw new Error(`invalid payment processor name "${name}"`);
    }
    entries.set(name, { id: `pm_${name}`, type: name, attributes: [{ name }] });
  }
  return {
    names: [...entries.keys()],
    has: (name) => entries.has(name),
    notConfigured: (name) => Object.hasOwn(adapters, name) && !entries.has(name),
    takesSplits: (name) => adapters[name]?.splits ?? true,
    describe(name) {
      const entry = entries.get(name) ?? { id: `pm_${name}`, type: name, attributes: [] };
      return { ...entry, attributes: entry.attributes.map((a) => ({ ...a })) };
    },
  };
}
