/* db_migrate.c — see db_migrate.h. */
#include "db_migrate.h"

#include "db.h"
#include "fileio.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Any constant works; it only has to be the same for every server. */
#define MIGRATE_LOCK_KEY "7421990001"

static const struct hv_stmt version_stmt = {
    "schema_version", "SELECT coalesce(max(version), 0) FROM hv_schema_migrations", 0};

/* Parses "NNN_name.sql" into NNN; -1 for any other name. */
static int migration_number(const char *name)
{
    size_t len = strlen(name);
    if (len < 6 || strcmp(name + len - 4, ".sql") != 0)
        return -1;
    int n = 0, digits = 0;
    while (name[digits] >= '0' && name[digits] <= '9' && digits < 6)
        n = n * 10 + (name[digits++] - '0');
    return digits > 0 && name[digits] == '_' ? n : -1;
}

static int cmp_names(const void *a, const void *b)
{
    return migration_number(*(char *const *)a) - migration_number(*(char *const *)b);
}

/* The migration file names of dir, sorted by number; NULL on error. */
static char **list_migrations(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return NULL;
    char **names = NULL;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (migration_number(e->d_name) < 0)
            continue;
        char **grown = realloc(names, (count + 1) * sizeof *names);
        if (grown == NULL)
            break;
        names = grown;
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, cmp_names);
    *n = count;
    return names ? names : calloc(1, sizeof *names);
}

int hv_migrations_latest(const char *dir)
{
    size_t n = 0;
    char **names = list_migrations(dir, &n);
    if (names == NULL)
        return -1;
    int latest = n > 0 ? migration_number(names[n - 1]) : 0;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return latest;
}

/* A migration is a few KiB; this bounds a file that is not one. */
#define MIGRATION_MAX_BYTES ((size_t)16 << 20)

/* Runs a whole SQL script (several statements) and reports failure. */
static int run_script(PGconn *c, const char *sql, const char *what)
{
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        hv_error("migrate: %s: %s", what, PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

int hv_schema_version(void)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return -1;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &version_stmt, NULL, &r);
    int v = s == HV_DB_OK ? atoi(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return v;
}

int hv_schema_level(void)
{
    static atomic_int level = -1;
    int v = atomic_load(&level);
    if (v < 0 && (v = hv_schema_version()) >= 0) {
        /* Two first calls may both read it; the first answer stays. */
        int unset = -1;
        if (!atomic_compare_exchange_strong(&level, &unset, v))
            v = unset;
    }
    return v;
}

int hv_migrate(const char *dir)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return -1;
    PGconn *c = hv_db_pg(db);
    size_t n = 0;
    char **names = list_migrations(dir, &n);
    if (names == NULL) {
        hv_error("migrate: cannot read %s", dir);
        return -1;
    }
    int applied = 0;
    if (run_script(c, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", "lock") != 0 ||
        run_script(c,
                   "CREATE TABLE IF NOT EXISTS hv_schema_migrations ("
                   " version integer PRIMARY KEY, name text NOT NULL,"
                   " applied_at timestamptz NOT NULL DEFAULT now())",
                   "schema table") != 0) {
        applied = -1;
    }
    for (size_t i = 0; i < n && applied >= 0; i++) {
        int num = migration_number(names[i]);
        char numtxt[16];
        snprintf(numtxt, sizeof numtxt, "%d", num);
        const char *params[] = {numtxt, names[i]};
        PGresult *r = PQexecParams(c, "SELECT 1 FROM hv_schema_migrations WHERE version = $1", 1,
                                   NULL, params, NULL, NULL, 0);
        int done = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0;
        PQclear(r);
        if (done)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len;
        char *sql = hv_read_file(path, MIGRATION_MAX_BYTES, 0, &len);
        if (sql == NULL) {
            hv_error("migrate: cannot read %s: %s", path, strerror(errno));
            applied = -1;
            break;
        }
        int ok = run_script(c, "BEGIN", "begin") == 0 && run_script(c, sql, names[i]) == 0;
        if (ok) {
            r = PQexecParams(c, "INSERT INTO hv_schema_migrations (version, name) VALUES ($1, $2)",
                             2, NULL, params, NULL, NULL, 0);
            ok = PQresultStatus(r) == PGRES_COMMAND_OK;
            if (!ok)
                hv_error("migrate: record %s: %s", names[i], PQresultErrorMessage(r));
            PQclear(r);
        }
        if (!ok || run_script(c, "COMMIT", "commit") != 0) {
            run_script(c, "ROLLBACK", "rollback");
            applied = -1;
        } else {
            printf("applied %s\n", names[i]);
            applied++;
        }
        free(sql);
    }
    run_script(c, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")", "unlock");
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return applied;
}
