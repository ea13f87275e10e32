/* db_migrate.h — schema migrations: numbered SQL files applied once. */
#ifndef HV_SERVER_DB_MIGRATE_H
#define HV_SERVER_DB_MIGRATE_H

/** The highest migration number among the NNN_name.sql files in dir, or -1
 *  when the folder cannot be read. */
int hv_migrations_latest(const char *dir);

/** Applies, in order, every migration of dir not yet recorded in
 *  hv_schema_migrations, each in its own transaction, all under an
 *  advisory lock so concurrent runs apply nothing twice. Prints one line
 *  per applied file. Returns the number applied, or -1 on error (logged). */
int hv_migrate(const char *dir);

/** The newest applied migration number (0 when none, -1 when the database
 *  cannot be asked). */
int hv_schema_version(void);

/** The migration level this process works with: hv_schema_version() as the
 *  first call that could read it found it, the same for every call after
 *  (a migration applied while the server runs counts from its restart).
 *  -1 while the database cannot be asked (the next call asks again).
 *  Thread safe. What is kept computed from the database's tables (report
 *  digests, report.h) is keyed by it: a table's shape changes only with a
 *  migration. */
int hv_schema_level(void);

#endif
