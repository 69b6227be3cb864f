import { Migrator } from "@mikro-orm/migrations";
import { MikroORM } from "@mikro-orm/postgresql";
import { migrations } from "./migrations/index.js";

export interface MigrationOrmOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** Where the ORM's own messages (migrations applied) go. */
  log?: (message: string) => void;
}

/**
 * createMigrationOrm opens MikroORM for one job: applying the committed
 * migrations (src/store/postgres/migrations, plain SQL through addSql) and
 * recording them in mikro_orm_migrations. The stores do not use it: they run
 * their own parameterized statements on a pg pool (database.ts). So it knows
 * no entities, and its one connection lives only as long as the migration.
 * This is the only module that imports the driver.
 */
export async function createMigrationOrm(options: MigrationOrmOptions): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: options.url,
    entities: [],
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    migrations: { migrationsList: migrations, snapshot: false, tableName: "mikro_orm_migrations" },
    // The migrator opens a second connection beside the one holding the lock.
    pool: { min: 0, max: 2 },
    driverOptions: { application_name: "payment-intents-migrate" },
    allowGlobalContext: false,
    debug: false,
    logger: options.log ?? (() => {}),
    // The database is provisioned by the operator; never create it implicitly.
    ensureDatabase: false,
  });
}
