import { ApiKeyEntity } from "./api-key-entity.js";
import { PaymentAttemptEntity } from "./payment-attempt-entity.js";
import { MerchantEntity } from "./merchant-entity.js";
import { PaymentIntentEntity } from "./payment-intent-entity.js";
import { PaymentIntentMethodEntity } from "./payment-intent-method-entity.js";
import { PaymentIntentSplitEntity } from "./payment-intent-split-entity.js";
import { SettlementAccountEntity } from "./settlement-account-entity.js";

/** Every entity, for the ORM's configuration. */
export const entities = [
  MerchantEntity,
  ApiKeyEntity,
  SettlementAccountEntity,
  PaymentIntentEntity,
  PaymentIntentMethodEntity,
  PaymentIntentSplitEntity,
  PaymentAttemptEntity,
];
