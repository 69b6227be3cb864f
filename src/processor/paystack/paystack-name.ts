/** The Paystack method's name: in the catalogue, on each attempt it takes, and in its webhook route. */
export const paystackName = "paystack";
