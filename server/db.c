/* db.c — see db.h. */
#include "db.h"

#include "log.h"
#include "metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PREPARED 256

/* The pauses, in milliseconds, before each new try of a transaction that
 * a lost connection cut: a database failing over (its primary gone, a
 * standby not promoted yet) refuses connections for a while. About 1.5 s
 * in all: a server thread is held that long at most, and a longer outage
 * is the client's to ride out (a worker keeps its results in its outbox
 * and uploads them again). */
static const unsigned cut_pause_ms[] = {50, 100, 200, 400, 800};
#define N_CUT_RETRIES (sizeof cut_pause_ms / sizeof cut_pause_ms[0])
/* Tries of a transaction that a serialization failure or a deadlock
 * undid. */
#define SERIAL_TRIES 3

struct hv_db {
    PGconn *conn;
    /* Statements prepared on this connection; reset on reconnect. */
    const struct hv_stmt *prepared[MAX_PREPARED];
    size_t n_prepared;
    /* It was open once: opening it again is a reconnect (for /metrics). */
    bool was_connected;
    /* hv_db_txn() began a transaction whose BEGIN is not sent yet: it goes
     * with the transaction's first statement (send_begin()). */
    bool begin_pending;
    /* The pending BEGIN went out and failed: nothing of the transaction
     * ran, so it may be tried again on a new connection. */
    bool begin_failed;
    /* The transaction's COMMIT went with its last statements
     * (hv_db_exec_all_commit()) and succeeded: hv_db_txn() sends none. */
    bool committed;
    /* The transaction's COMMIT was sent: when no answer to it came, it
     * may have committed, and hv_db_txn() must not run it again. */
    bool commit_sent;
    /* The connection is open but unusable for writing (the server is a
     * standby: SQLSTATE 25006): the next use opens another. */
    bool stale;
    /* Why the last statement that failed did (its SQLSTATE and message):
     * a constraint a caller did not expect to meet is logged with it. */
    char last_error[256];
};

static char *db_conninfo;
static _Thread_local bool thread_batch_mode;
static pthread_key_t db_key;
static pthread_once_t db_key_once = PTHREAD_ONCE_INIT;

static void db_destroy(void *p)
{
    struct hv_db *db = p;
    if (db->conn != NULL)
        PQfinish(db->conn);
    free(db);
}

static void db_make_key(void)
{
    pthread_key_create(&db_key, db_destroy);
}

void hv_db_configure(const char *conninfo)
{
    free(db_conninfo);
    db_conninfo = strdup(conninfo);
}

/* Server notices (e.g. "already exists, skipping") are for debugging. */
static void notice_to_log(void *arg, const char *message)
{
    hv_debug("database notice: %s", message);
}

/* Opens (or reopens) db->conn; returns false when it cannot. */
static bool db_connect(struct hv_db *db)
{
    if (db->conn != NULL)
        PQfinish(db->conn);
    db->n_prepared = 0;
    db->stale = false;
    db->conn = PQconnectdb(db_conninfo ? db_conninfo : "");
    if (PQstatus(db->conn) != CONNECTION_OK) {
        hv_error("database: %s", PQerrorMessage(db->conn));
        PQfinish(db->conn);
        db->conn = NULL;
        return false;
    }
    if (db->was_connected)
        hv_metrics_db_reconnect();
    db->was_connected = true;
    PQsetNoticeProcessor(db->conn, notice_to_log, NULL);
    /* The server keeps times in UTC and never waits long on a lock: a
     * stuck request is worse than a retried one. No JIT: its compile cost
     * (0.15 s for the fleet history of 500 hosts, whose statement's cost
     * estimate passes jit_above_cost) is paid on every execution of a
     * statement that runs under a second. work_mem: the sorts of a fleet's
     * or a long history's points (some MB) stay in memory. */
    PGresult *r = PQexec(db->conn, "SET TIME ZONE 'UTC'; SET lock_timeout = '10s'; "
                                   "SET statement_timeout = '60s'; SET jit = off; "
                                   "SET work_mem = '16MB'");
    PQclear(r);
    if (thread_batch_mode) {
        r = PQexec(db->conn, "SET plan_cache_mode = force_generic_plan");
        PQclear(r);
    }
    return true;
}

void hv_db_thread_batch_mode(void)
{
    thread_batch_mode = true;
}

/* Whether db's connection can take a statement. */
static bool usable(const struct hv_db *db)
{
    return db->conn != NULL && !db->stale && PQstatus(db->conn) == CONNECTION_OK;
}

struct hv_db *hv_db_thread(void)
{
    pthread_once(&db_key_once, db_make_key);
    struct hv_db *db = pthread_getspecific(db_key);
    if (db == NULL) {
        db = calloc(1, sizeof *db);
        if (db == NULL)
            return NULL;
        pthread_setspecific(db_key, db);
    }
    if (!usable(db) && !db_connect(db))
        return NULL;
    return db;
}

static enum hv_db_status send_begin(struct hv_db *db);
static enum hv_db_status send_commit(struct hv_db *db);

PGconn *hv_db_pg(struct hv_db *db)
{
    /* Whatever the caller sends runs inside a transaction begun for it;
     * a BEGIN that fails here fails the caller's first statement. */
    send_begin(db);
    return db->conn;
}

/* Maps a failed result to a status, logging unexpected errors. */
static enum hv_db_status classify(struct hv_db *db, PGresult *r, const char *what)
{
    if (PQstatus(db->conn) != CONNECTION_OK)
        return HV_DB_UNAVAILABLE;
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    snprintf(db->last_error, sizeof db->last_error, "%s: %s", state ? state : "?",
             PQresultErrorMessage(r));
    db->last_error[strcspn(db->last_error, "\n")] = '\0';
    if (state != NULL) {
        if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0)
            return HV_DB_RETRY;
        if (strcmp(state, "23505") == 0 || strcmp(state, "23514") == 0 ||
            strcmp(state, "23503") == 0)
            return HV_DB_CONFLICT;
        /* Class 08 (connection) and 57P0x (server shutting down). */
        if (strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0)
            return HV_DB_UNAVAILABLE;
        /* A read-only transaction: the connection reached a standby (a
         * primary demoted, or a failover under way); another connection
         * finds the primary (target_session_attrs=read-write). */
        if (strcmp(state, "25006") == 0) {
            db->stale = true;
            return HV_DB_UNAVAILABLE;
        }
    }
    hv_error("database: %s: %s", what, PQresultErrorMessage(r));
    return HV_DB_ERROR;
}

static bool is_prepared(struct hv_db *db, const struct hv_stmt *st)
{
    for (size_t i = 0; i < db->n_prepared; i++)
        if (db->prepared[i] == st)
            return true;
    return false;
}

static enum hv_db_status prepare(struct hv_db *db, const struct hv_stmt *st)
{
    if (is_prepared(db, st))
        return HV_DB_OK;
    PGresult *r = PQprepare(db->conn, st->name, st->sql, st->nparams, NULL);
    enum hv_db_status s =
        PQresultStatus(r) == PGRES_COMMAND_OK ? HV_DB_OK : classify(db, r, st->name);
    PQclear(r);
    if (s == HV_DB_OK && db->n_prepared < MAX_PREPARED)
        db->prepared[db->n_prepared++] = st;
    return s;
}

/* A statement's result as a status; r goes to *res or is cleared. */
static enum hv_db_status take_result(struct hv_db *db, const struct hv_stmt *st, PGresult *r,
                                     PGresult **res)
{
    ExecStatusType es = PQresultStatus(r);
    if (es == PGRES_TUPLES_OK || es == PGRES_COMMAND_OK) {
        bool none = es == PGRES_TUPLES_OK ? PQntuples(r) == 0 : strcmp(PQcmdTuples(r), "0") == 0;
        if (res != NULL)
            *res = r;
        else
            PQclear(r);
        return none ? HV_DB_NONE : HV_DB_OK;
    }
    enum hv_db_status s = classify(db, r, st->name);
    PQclear(r);
    return s;
}

/* The result of the next query of a pipeline, and the NULL that ends it;
 * NULL when the connection has none to give. */
static PGresult *pipeline_result(PGconn *c)
{
    PGresult *r = PQgetResult(c);
    if (r != NULL) {
        PGresult *rest;
        while ((rest = PQgetResult(c)) != NULL)
            PQclear(rest);
    }
    return r;
}

/* Statements in one round trip (libpq's pipeline mode), after the pending
 * BEGIN of their transaction if there is one: a job's claim and its result
 * are each one transaction whose BEGIN alone was a round trip, a wake-up
 * of the database session and of the server thread, for nothing. Each
 * statement is prepared already. Returns the first status of the
 * statements that is not HV_DB_OK (the rest ran unless it was a failure),
 * or HV_DB_OK; res[i] as hv_db_exec() sets it. */
static enum hv_db_status run_pipeline(struct hv_db *db, size_t n, const struct hv_stmt *const *st,
                                      const char *const *const *params, PGresult **res, bool commit)
{
    if (n > HV_DB_PIPELINE_MAX)
        return HV_DB_ERROR;
    bool begin = db->begin_pending;
    db->begin_pending = false;
    PGresult *rs[HV_DB_PIPELINE_MAX + 2] = {NULL};
    size_t first = begin ? 1 : 0, total = first + n + (commit ? 1 : 0);
    if (!PQenterPipelineMode(db->conn)) {
        db->begin_pending = begin;
        enum hv_db_status s = send_begin(db);
        for (size_t i = 0; i < n && s == HV_DB_OK; i++)
            s = take_result(
                db, st[i],
                PQexecPrepared(db->conn, st[i]->name, st[i]->nparams, params[i], NULL, NULL, 0),
                res ? &res[i] : NULL);
        if (commit && (s == HV_DB_OK || s == HV_DB_NONE)) {
            enum hv_db_status c = send_commit(db);
            db->committed = c == HV_DB_OK;
            s = c == HV_DB_OK ? s : c;
        }
        return s;
    }
    bool sent = !begin || PQsendQueryParams(db->conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0);
    for (size_t i = 0; i < n && sent; i++)
        sent = PQsendQueryPrepared(db->conn, st[i]->name, st[i]->nparams, params[i], NULL, NULL, 0);
    if (commit && sent) {
        db->commit_sent = true;
        sent = PQsendQueryParams(db->conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0);
    }
    sent = sent && PQpipelineSync(db->conn);
    for (size_t i = 0; i < total && sent; i++)
        rs[i] = pipeline_result(db->conn);
    PGresult *sync = sent ? PQgetResult(db->conn) : NULL;
    bool synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
    PQclear(sync);
    if (begin && PQresultStatus(rs[0]) != PGRES_COMMAND_OK)
        db->begin_failed = true;
    if (!synced || !PQexitPipelineMode(db->conn)) {
        /* The connection is in no state to go on: its transaction is lost,
         * and the next call opens a new one. */
        hv_warn("database: %s: the pipeline did not complete: %s", st[0]->name,
                PQerrorMessage(db->conn));
        for (size_t i = 0; i < total; i++)
            PQclear(rs[i]);
        PQfinish(db->conn);
        db->conn = NULL;
        return HV_DB_UNAVAILABLE;
    }
    enum hv_db_status s = HV_DB_OK;
    if (begin) {
        if (db->begin_failed)
            s = classify(db, rs[0], "BEGIN");
        PQclear(rs[0]);
    }
    for (size_t i = 0; i < n; i++) {
        if (s != HV_DB_OK && s != HV_DB_NONE) {
            PQclear(rs[first + i]);
            continue;
        }
        enum hv_db_status si = take_result(db, st[i], rs[first + i], res ? &res[i] : NULL);
        if (s == HV_DB_OK)
            s = si;
    }
    if (commit) {
        /* After a statement that failed, the COMMIT was skipped: the
         * transaction is aborted, and hv_db_txn() rolls it back. */
        PGresult *c = rs[first + n];
        if (s == HV_DB_OK || s == HV_DB_NONE) {
            if (PQresultStatus(c) == PGRES_COMMAND_OK)
                db->committed = true;
            else
                s = classify(db, c, "COMMIT");
        }
        PQclear(c);
    }
    return s;
}

static enum hv_db_status exec_once(struct hv_db *db, const struct hv_stmt *st,
                                   const char *const *params, PGresult **res)
{
    enum hv_db_status s = prepare(db, st);
    if (s != HV_DB_OK)
        return s;
    if (db->begin_pending)
        return run_pipeline(db, 1, &st, &params, res, false);
    PGresult *r = PQexecPrepared(db->conn, st->name, st->nparams, params, NULL, NULL, 0);
    return take_result(db, st, r, res);
}

/* Sends a pending BEGIN on its own, for what does not go through
 * exec_once(). */
static enum hv_db_status send_begin(struct hv_db *db)
{
    if (!db->begin_pending)
        return HV_DB_OK;
    db->begin_pending = false;
    PGresult *r = PQexec(db->conn, "BEGIN");
    enum hv_db_status s =
        PQresultStatus(r) == PGRES_COMMAND_OK ? HV_DB_OK : classify(db, r, "BEGIN");
    PQclear(r);
    if (s != HV_DB_OK)
        db->begin_failed = true;
    return s;
}

enum hv_db_status hv_db_exec(struct hv_db *db, const struct hv_stmt *st, const char *const *params,
                             PGresult **res)
{
    if (res != NULL)
        *res = NULL;
    if (db->conn == NULL)
        return HV_DB_UNAVAILABLE;
    bool in_txn = db->begin_pending || PQtransactionStatus(db->conn) != PQTRANS_IDLE;
    enum hv_db_status s = exec_once(db, st, params, res);
    if (s == HV_DB_UNAVAILABLE && !in_txn) {
        /* The database restarted under us: reconnect and try once more. */
        hv_warn("database connection lost; reconnecting");
        if (db_connect(db))
            s = exec_once(db, st, params, res);
    }
    return s;
}

static enum hv_db_status exec_all(struct hv_db *db, size_t n, const struct hv_stmt *const *st,
                                  const char *const *const *params, PGresult **res, bool commit)
{
    for (size_t i = 0; res != NULL && i < n; i++)
        res[i] = NULL;
    if (db->conn == NULL)
        return HV_DB_UNAVAILABLE;
    for (size_t i = 0; i < n; i++) {
        enum hv_db_status s = prepare(db, st[i]);
        if (s != HV_DB_OK)
            return s;
    }
    return run_pipeline(db, n, st, params, res, commit);
}

enum hv_db_status hv_db_exec_all(struct hv_db *db, size_t n, const struct hv_stmt *const *st,
                                 const char *const *const *params, PGresult **res)
{
    return exec_all(db, n, st, params, res, false);
}

enum hv_db_status hv_db_exec_all_commit(struct hv_db *db, size_t n, const struct hv_stmt *const *st,
                                        const char *const *const *params, PGresult **res)
{
    return exec_all(db, n, st, params, res, true);
}

enum hv_db_status hv_db_command(struct hv_db *db, const char *sql)
{
    if (db->conn == NULL)
        return HV_DB_UNAVAILABLE;
    enum hv_db_status b = send_begin(db);
    if (b != HV_DB_OK)
        return b;
    PGresult *r = PQexec(db->conn, sql);
    enum hv_db_status s = PQresultStatus(r) == PGRES_COMMAND_OK ? HV_DB_OK : classify(db, r, sql);
    PQclear(r);
    return s;
}

/* Sends the transaction's COMMIT; from then on, when no answer comes, the
 * transaction may have committed. Not sent on a connection known broken:
 * nothing of the transaction can commit then. */
static enum hv_db_status send_commit(struct hv_db *db)
{
    if (!usable(db))
        return HV_DB_UNAVAILABLE;
    db->commit_sent = true;
    return hv_db_command(db, "COMMIT");
}

/* Sleeps ms milliseconds. */
static void pause_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Runs fn once between BEGIN and COMMIT (or ROLLBACK) on db's open
 * connection. */
static enum hv_db_status txn_once(struct hv_db *db, hv_db_txn_fn fn, void *arg)
{
    db->begin_pending = true;
    db->begin_failed = false;
    db->committed = false;
    db->commit_sent = false;
    enum hv_db_status s = fn(db, arg);
    /* What failed as its connection broke (a COPY, whose failure fn sees
     * as an error) failed for want of the database. */
    if (s == HV_DB_ERROR && db->conn != NULL && PQstatus(db->conn) != CONNECTION_OK)
        s = HV_DB_UNAVAILABLE;
    bool nothing_sent = db->begin_pending, committed = db->committed;
    db->begin_pending = false;
    db->committed = false;
    if (committed || nothing_sent)
        return s; /* committed already, or nothing to end */
    if (s == HV_DB_OK || s == HV_DB_NONE) {
        enum hv_db_status c = send_commit(db);
        return c == HV_DB_OK ? s : c;
    }
    if (usable(db) && PQtransactionStatus(db->conn) != PQTRANS_IDLE)
        hv_db_command(db, "ROLLBACK");
    return s;
}

enum hv_db_status hv_db_txn(struct hv_db *db, hv_db_txn_fn fn, void *arg)
{
    unsigned serial = 0, cuts = 0;
    for (;;) {
        enum hv_db_status s =
            usable(db) || db_connect(db) ? txn_once(db, fn, arg) : HV_DB_UNAVAILABLE;
        if (s == HV_DB_RETRY && ++serial < SERIAL_TRIES)
            continue;
        if (s != HV_DB_UNAVAILABLE)
            return s;
        if (db->commit_sent) {
            /* The COMMIT went out and no answer came: the transaction may
             * be stored (on the new primary too, with synchronous
             * replication), so it is not run again. The caller answers
             * 503; a client that asks again is answered from what is
             * stored (an upload as a replay). */
            hv_warn("database connection lost at a COMMIT; its outcome is unknown");
            hv_metrics_db_commit_unknown();
            db->commit_sent = false;
            return s;
        }
        if (cuts >= N_CUT_RETRIES)
            return s;
        /* Nothing of the transaction can have committed: the server rolls
         * back what a lost connection leaves open. Run it again, from the
         * start, on a new connection, once the database takes one. */
        if (db->conn != NULL) {
            PQfinish(db->conn);
            db->conn = NULL;
        }
        hv_warn("database connection lost in a transaction; trying it again (%u of %zu)", cuts + 1,
                N_CUT_RETRIES);
        hv_metrics_db_txn_retry();
        pause_ms(cut_pause_ms[cuts++]);
    }
}

char *hv_db_text_array(const char *const *items, size_t n)
{
    size_t cap = 3;
    for (size_t i = 0; i < n; i++)
        cap += (items[i] ? 2 * strlen(items[i]) : 4) + 3;
    char *out = malloc(cap);
    if (out == NULL)
        return NULL;
    size_t k = 0;
    out[k++] = '{';
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            out[k++] = ',';
        if (items[i] == NULL) {
            memcpy(out + k, "NULL", 4);
            k += 4;
            continue;
        }
        out[k++] = '"';
        for (const char *p = items[i]; *p; p++) {
            if (*p == '"' || *p == '\\')
                out[k++] = '\\';
            out[k++] = *p;
        }
        out[k++] = '"';
    }
    out[k++] = '}';
    out[k] = '\0';
    return out;
}

static enum hv_db_status json_cells(struct hv_db *db, const struct hv_stmt *st,
                                    const char *const *params, json_t **out, json_t **second)
{
    *out = NULL;
    if (second != NULL)
        *second = NULL;
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, st, params, &r);
    if (s == HV_DB_OK) {
        *out = json_loads(PQgetvalue(r, 0, 0), JSON_DECODE_ANY, NULL);
        if (second != NULL && PQnfields(r) > 1 && !PQgetisnull(r, 0, 1))
            *second = json_loads(PQgetvalue(r, 0, 1), JSON_DECODE_ANY, NULL);
        if (*out == NULL)
            s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_json(const struct hv_stmt *st, const char *const *params, json_t **out,
                             json_t **second)
{
    return json_cells(hv_db_thread(), st, params, out, second);
}

enum hv_db_status hv_db_text(const struct hv_stmt *st, const char *const *params,
                             struct hv_db_text *out)
{
    *out = (struct hv_db_text){"null", 4, NULL};
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, st, params, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    if (!PQgetisnull(r, 0, 0)) {
        out->text = PQgetvalue(r, 0, 0);
        out->len = (size_t)PQgetlength(r, 0, 0);
    }
    out->res = r;
    return HV_DB_OK;
}

void hv_db_text_free(void *res)
{
    PQclear(res);
}

enum hv_db_status hv_db_json_in(struct hv_db *db, const struct hv_stmt *st,
                                const char *const *params, json_t **out)
{
    return json_cells(db, st, params, out, NULL);
}

const char *hv_db_last_error(const struct hv_db *db)
{
    return db->last_error;
}

const char *hv_db_int(char *buf, size_t len, long long v)
{
    snprintf(buf, len, "%lld", v);
    return buf;
}
