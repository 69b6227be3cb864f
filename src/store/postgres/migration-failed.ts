/**
 * MigrationFailed is a migration the database refused (a missing privilege,
 * a conflicting object): the service cannot start on that schema. Its
 * message is the database's, which names objects, never values. A module of
 * its own, so the start-up error reporting does not load the ORM.
 */
export class MigrationFailed extends Error {
  override readonly name = "MigrationFailed";
}
