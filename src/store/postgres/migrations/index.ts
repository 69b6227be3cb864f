import { Migration20261121000000_initial } from "./Migration20261121000000_initial.js";
import { Migration20261121120000_payment_attempts } from "./Migration20261121120000_payment_attempts.js";
import { Migration20261123000000_methods_array } from "./Migration20261123000000_methods_array.js";
import { Migration20261123120000_events_webhooks } from "./Migration20261123120000_events_webhooks.js";
import { Migration20261126110000_refunds } from "./Migration20261126110000_refunds.js";
import { Migration20261126120000_merchant_keys } from "./Migration20261126120000_merchant_keys.js";
import { Migration20261126130000_attempt_lifecycle } from "./Migration20261126130000_attempt_lifecycle.js";
import { Migration20261126140000_delivery_leases } from "./Migration20261126140000_delivery_leases.js";
import { Migration20261126140000_modes } from "./Migration20261126140000_modes.js";
import { Migration20261126160000_intent_meta } from "./Migration20261126160000_intent_meta.js";
import { Migration20261126170000_methods_check } from "./Migration20261126170000_methods_check.js";
import { Migration20261126180000_api_key_resource } from "./Migration20261126180000_api_key_resource.js";

/** Every migration, oldest first. Listed, not discovered, so no file globbing at run time. */
export const migrations = [
  Migration20261121000000_initial,
  Migration20261121120000_payment_attempts,
  Migration20261123000000_methods_array,
  Migration20261123120000_events_webhooks,
  Migration20261126110000_refunds,
  Migration20261126120000_merchant_keys,
  Migration20261126130000_attempt_lifecycle,
  Migration20261126140000_delivery_leases,
  Migration20261126140000_modes,
  Migration20261126160000_intent_meta,
  Migration20261126170000_methods_check,
  Migration20261126180000_api_key_resource,
];
