/* db.h — the database layer's core: one PostgreSQL connection per thread,
 * prepared statements, a status enum and a transaction runner.
 *
 * Only server/db_*.c use this; handlers call the db_*.h functions and never
 * see SQL. Every statement is a struct hv_stmt prepared on first use on
 * each connection (and again after a reconnect). */
#ifndef HV_SERVER_DB_H
#define HV_SERVER_DB_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>

/** The outcome of a database call. */
enum hv_db_status {
    HV_DB_OK = 0,
    HV_DB_NONE,        /**< the statement ran and found no row */
    HV_DB_CONFLICT,    /**< a unique or check constraint refused the change */
    HV_DB_RETRY,       /**< serialization failure or deadlock: run again */
    HV_DB_UNAVAILABLE, /**< no connection to the database */
    HV_DB_ERROR,       /**< anything else; logged */
};

/** A prepared statement: a unique name, its SQL, its parameter count. */
struct hv_stmt {
    const char *name;
    const char *sql;
    int nparams;
};

struct hv_db;

/** Sets the connection string used by every thread. Call once at start. */
void hv_db_configure(const char *conninfo);

/** The calling thread's connection, opened on first use and reopened when
 *  it broke. Returns NULL (and logs once per outage) when the database
 *  cannot be reached. The connection is closed when the thread exits. */
struct hv_db *hv_db_thread(void);

/** Settings for the calling thread's connection (now and after a
 *  reconnect) whose statements take the arrays of a batch (server/batch.c):
 *  one plan for each prepared statement, whatever its parameters (else
 *  PostgreSQL plans again on every call once its estimate of the one plan
 *  grows with the tables), and no JIT compilation (that estimate also
 *  crosses jit_above_cost, and compiling a claim statement took 1.4 s a
 *  call for 2 ms of work). */
void hv_db_thread_batch_mode(void);

/** The underlying libpq connection (for COPY). */
PGconn *hv_db_pg(struct hv_db *db);

/** Executes st with text params (NULL entries are SQL NULL). On HV_DB_OK
 *  and HV_DB_NONE *res (when res is not NULL) holds the result, which the
 *  caller must PQclear(); on other outcomes *res is NULL. A broken
 *  connection outside a transaction is reopened and the statement retried
 *  once. */
enum hv_db_status hv_db_exec(struct hv_db *db, const struct hv_stmt *st, const char *const *params,
                             PGresult **res);

/** The most statements hv_db_exec_all() sends at once. */
#define HV_DB_PIPELINE_MAX 4

/** Runs n (at most HV_DB_PIPELINE_MAX) prepared statements in one round
 *  trip, in order, each with its params[i]; res[i] (res may be NULL) as
 *  hv_db_exec() sets it, to PQclear. A statement that fails aborts the
 *  rest (their res[i] stay NULL); one that finds no row does not. Returns
 *  the first status that is not HV_DB_OK, or HV_DB_OK. For statements
 *  whose parameters do not depend on each other's results, inside a
 *  transaction (hv_db_txn()). */
enum hv_db_status hv_db_exec_all(struct hv_db *db, size_t n, const struct hv_stmt *const *st,
                                 const char *const *const *params, PGresult **res);

/** hv_db_exec_all(), and the transaction's COMMIT in the same round trip,
 *  for the last statements of a transaction of hv_db_txn() whose outcome
 *  needs nothing more: once they and the COMMIT succeeded, hv_db_txn()
 *  sends no COMMIT of its own. The function passed to hv_db_txn() runs no
 *  statement after it, and returns HV_DB_OK or HV_DB_NONE only when it
 *  did; on any other status the transaction was not committed. */
enum hv_db_status hv_db_exec_all_commit(struct hv_db *db, size_t n, const struct hv_stmt *const *st,
                                        const char *const *const *params, PGresult **res);

/** Runs st on the calling thread's connection and parses the first row's
 *  first cell (JSON text) into *out, and its second cell into *second when
 *  second is not NULL (a cell that is SQL NULL gives NULL). New references.
 *  HV_DB_NONE when there is no row. */
enum hv_db_status hv_db_json(const struct hv_stmt *st, const char *const *params, json_t **out,
                             json_t **second);

/** The first cell of a statement's first row, as the text it came in: for
 *  large JSON answers built by the statement, sent as they are, neither
 *  parsed nor copied. */
struct hv_db_text {
    const char *text; /**< NUL-terminated; valid until hv_db_text_free(res) */
    size_t len;       /**< bytes of text */
    void *res;        /**< the PGresult holding it, owned */
};

/** Runs st on the calling thread's connection and keeps its first row's
 *  first cell in *out (pass out->res to hv_db_text_free once done; on any
 *  status but HV_DB_OK out->res is NULL). A cell that is SQL NULL reads as
 *  "null". HV_DB_NONE when there is no row. */
enum hv_db_status hv_db_text(const struct hv_stmt *st, const char *const *params,
                             struct hv_db_text *out);

/** Frees the result of an hv_db_text() (a PGresult; NULL is fine). Any
 *  thread may call it. */
void hv_db_text_free(void *res);

/** hv_db_json() on db (inside a transaction of hv_db_txn()), first cell
 *  only. */
enum hv_db_status hv_db_json_in(struct hv_db *db, const struct hv_stmt *st,
                                const char *const *params, json_t **out);

/** Why the last statement on db that failed did: "SQLSTATE: message" on
 *  one line ("" before any failure). For a caller that logs a refusal it
 *  did not expect (HV_DB_CONFLICT is not logged by the layer). Valid until
 *  the next statement on db. */
const char *hv_db_last_error(const struct hv_db *db);

/** Formats an integer for a text parameter into buf (24 bytes suffice). */
const char *hv_db_int(char *buf, size_t len, long long v);

/** s, except HV_DB_NONE becomes HV_DB_ERROR: for a statement that must
 *  find or change a row, where finding none is a failure. */
static inline enum hv_db_status hv_db_must(enum hv_db_status s)
{
    return s == HV_DB_NONE ? HV_DB_ERROR : s;
}

/** Runs one SQL command without parameters (BEGIN, COMMIT, ...). */
enum hv_db_status hv_db_command(struct hv_db *db, const char *sql);

/** A unit of work run inside a transaction by hv_db_txn(). */
typedef enum hv_db_status (*hv_db_txn_fn)(struct hv_db *db, void *arg);

/** Runs fn between BEGIN and COMMIT, rolling back when fn returns anything
 *  but HV_DB_OK or HV_DB_NONE; retries the whole unit up to 3 times on
 *  HV_DB_RETRY. fn must be safe to run again.
 *
 *  A lost connection (a database restart or failover: connection errors,
 *  SQLSTATE 57P0x, or 25006 from a server that turned out to be a standby)
 *  that cut the transaction before its COMMIT was sent is survived: fn is
 *  run again from the start on a new connection (the connection string may
 *  name several hosts, target_session_attrs=read-write finding the
 *  primary), after a pause, up to 5 times in about 1.5 s, then
 *  HV_DB_UNAVAILABLE. A connection lost once the COMMIT was sent leaves
 *  the outcome unknown: fn is not run again and the result is
 *  HV_DB_UNAVAILABLE, so what the caller answers must be safe to ask
 *  again (an upload asked again finds its result and answers a replay).
 *  The pauses hold the calling thread. */
enum hv_db_status hv_db_txn(struct hv_db *db, hv_db_txn_fn fn, void *arg);

/** Formats a C array of strings as a PostgreSQL array literal into a
 *  malloc'd string (caller frees). Elements are quoted and escaped; NULL
 *  elements become SQL NULL. */
char *hv_db_text_array(const char *const *items, size_t n);

#endif
