import { Migration } from "@mikro-orm/migrations";

/**
 * The webhook claim counts each endpoint's leases (issue 21 §2). Through
 * webhook_deliveries_endpoint_pending_idx that count visited every pending
 * delivery of the endpoint, so one endpoint's backlog made every claim cost
 * its length; leased rows are a handful (at most the per-endpoint limit on
 * each endpoint), and this index holds only them.
 */
export class Migration20261126140000_delivery_leases extends Migration {
  override name = "Migration20261126140000_delivery_leases";

  override up(): void {
    this.addSql(`create index webhook_deliveries_leased_idx on webhook_deliveries (merchant_id, endpoint_id) where lease_token is not null`);
  }

  override down(): void {
    this.addSql(`drop index webhook_deliveries_leased_idx`);
  }
}
