/* db_plan_read.c — reading plans (db_plans.h): a plan's summary and the
 * answer of GET /api/v1/plans/{id}, plan lists, targets never registered,
 * the tuning plans of a host, and a plan's owner. */
#include "db_plans.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a plan waits for when nothing set plans.waiting: the targets of its
 * queued jobs that no worker ever registered (five named, then a count). */
#define WAITING_UNREGISTERED                                                                       \
    "CASE WHEN cardinality(unregistered) > 0 THEN json_build_object('reason', "                    \
    "'target_unregistered', 'since', created_at, 'detail', 'waiting for target' || CASE WHEN "     \
    "cardinality(unregistered) > 1 THEN 's ' ELSE ' ' END || "                                     \
    "array_to_string(unregistered[1:5], ', ') || CASE WHEN cardinality(unregistered) > 5 THEN "    \
    "' and ' || (cardinality(unregistered) - 5) || ' more' ELSE '' END || ' (never "               \
    "registered)') END"

/* What a fleet plan's child waits for while older siblings hold every
 * slot (migrations/022_fleet_plans.sql): first, for nothing of it (its
 * before_host hook, its apply steps, its jobs) starts before that. */
#define WAITING_SLOT                                                                               \
    "CASE WHEN slot_wait IS NOT NULL THEN json_build_object('reason', 'waiting_for_slot', "        \
    "'since', created_at, 'detail', slot_wait) END"

/* A plan's share of jobs ended. */
#define PROGRESS                                                                                   \
    "CASE WHEN total = 0 THEN 0 ELSE round((done + failed + cancelled_jobs)::numeric / total, 4) " \
    "END"

/* Joins the owner of plan row p (its id and parent_id; server/plan_owner.h)
 * as columns owner_id and owner (the token's name), both NULL when the
 * plan has none: the token that submitted it, a fleet child's being its
 * parent's, while that token is not revoked. A plan imported from another
 * server records no token. Only those two names come into the row's
 * scope, so the statements it joins keep naming their own columns
 * unqualified. */
#define OWNER_JOIN                                                                                 \
    " LEFT JOIN LATERAL (SELECT t.id AS owner_id, t.name AS owner FROM plans o JOIN tokens t ON "  \
    "t.id = o.token_id WHERE o.id = coalesce(p.parent_id, p.id) AND t.revoked_at IS NULL) own ON " \
    "true "

/* A plan's end as its transition stamped it (migrations/046), for a
 * statement over plan_summaries p: one column, ended_at. */
#define ENDED_JOIN " CROSS JOIN LATERAL (SELECT e.ended_at FROM plans e WHERE e.id = p.id) e "

/* A plan as the API shows it (a row of plan_summaries). updated_at moves
 * with every job's change of state; finished_at is the plan's ended_at,
 * stamped by the transition that ended it (null while the plan is queued
 * or running); owner and ended_at come from OWNER_JOIN and ENDED_JOIN,
 * which the statement joins. plan_read below gives the same members as
 * columns. */
#define SUMMARY_JSON "json_build_object(" SUMMARY_MEMBERS ")"
#define SUMMARY_MEMBERS                                                                            \
    "'id', id, 'name', name, 'status', status, 'created_at', created_at, "                         \
    "'updated_at', greatest(updated_at, state_at), 'started_at', started_at, 'finished_at', "      \
    "ended_at, 'cancelled_at', cancelled_at, 'seed', seed, 'owner', owner, "                       \
    "'jobs', "                                                                                     \
    "json_build_object('total', total, 'queued', queued, 'running', running, 'done', done, "       \
    "'failed', failed, 'cancelled', cancelled_jobs), 'progress', " PROGRESS ", 'waiting', CASE "   \
    "WHEN status IN ('queued', 'running') THEN coalesce(" WAITING_SLOT                             \
    ", waiting::json, " WAITING_UNREGISTERED ") END, 'rounds', adaptive"

/* Whether plan p is a fleet's parent: its targets.host is a label
 * selector (lib/plan_fleet.h). */
#define FLEET_PARENT "jsonb_typeof(p.spec->'targets'->'host') = 'object'"

/* One plan's row with plan_summaries's columns (those a summary reads),
 * read from the plan and its kept counts (migrations/016) alone, a fleet
 * parent's being its children's: the queued targets instead of the
 * unregistered ones, and a fleet child's slot asked for only when it can
 * wait for one. No subquery: PostgreSQL sets up every subquery of a
 * statement each time it runs it, run or not, and for a read that was
 * most of its cost; what only some plans need is a function
 * (migrations/030), which costs nothing where it is not called. */
#define PLAN_ROW                                                                                   \
    "SELECT p.id, p.name, p.spec, p.seed, p.cancelled, p.created_at, p.updated_at, "               \
    "p.cancelled_at, p.ended_at, p.waiting, p.adaptive, p.parent_id, p.max_parallel_hosts, c.*, "  \
    "p.state AS status, " FLEET_PARENT                                                             \
    " AS fleet_parent, CASE WHEN p.parent_id IS NOT NULL AND NOT "                                 \
    "p.cancelled AND c.queued > 0 AND c.running = 0 THEN hv_plan_slot_wait(p.id) END AS "          \
    "slot_wait FROM plans p CROSS JOIN LATERAL (SELECT coalesce(sum(k.total), 0)::bigint AS "      \
    "total, coalesce(sum(k.queued), 0)::bigint AS queued, coalesce(sum(k.running), 0)::bigint AS " \
    "running, coalesce(sum(k.done), 0)::bigint AS done, coalesce(sum(k.failed), 0)::bigint AS "    \
    "failed, coalesce(sum(k.cancelled), 0)::bigint AS cancelled_jobs, min(k.started_at) AS "       \
    "started_at, max(k.state_at) AS state_at, "                                                    \
    "array_agg(k.target_name) FILTER (WHERE k.queued > 0) AS queued_targets FROM plan_job_counts " \
    "k WHERE k.plan_id = ANY (CASE WHEN " FLEET_PARENT " THEN hv_plan_children(p.id) ELSE "        \
    "ARRAY[p.id] END)) c WHERE p.id = $1"

/* GET /api/v1/plans/{id}'s answer, in one statement: the summary's members
 * as columns of JSON text (timestamps and the name through to_json, so
 * their text is what json_build_object gives), a fleet's side of it
 * (migrations/030, hv_plan_fleet) for a plan of a fleet, the plan as stored
 * and its drain hooks for a plan that has any, and last its owner's name.
 * hv_db_plan_read() joins the texts into the answer: built here, one
 * json_build_object of thirty members cost PostgreSQL more than everything
 * else the read does. */
static const struct hv_stmt plan_read = {
    "plan_read",
    "SELECT id, to_json(name)::text, status, to_json(created_at)::text, to_json(greatest("
    "updated_at, state_at))::text, to_json(started_at)::text, to_json(ended_at)::text, "
    "to_json(cancelled_at)::text, seed, total, queued, running, done, "
    "failed, cancelled_jobs, " PROGRESS ", CASE WHEN status IN ('queued', 'running') THEN "
    "coalesce(" WAITING_SLOT ", waiting::json, hv_plan_waiting_unregistered(created_at, "
    "queued_targets))::text END, adaptive::text, CASE WHEN parent_id IS NOT NULL OR "
    "fleet_parent THEN nullif(btrim(hv_plan_fleet(id)::text, '{} '), '') END, spec::text, CASE "
    "WHEN spec ? "
    "'hooks' THEN "
    "hv_plan_hooks(id)::text END, to_json(owner)::text FROM (" PLAN_ROW ") p" OWNER_JOIN,
    1};

/* GET /api/v1/plans/{id}'s answer for a plan outside a fleet and without
 * drain hooks (most plans), as rows instead of aggregates: first the
 * plan's own row (its first column true), then its shard rows of the kept
 * counts (migrations/034) in target order, each saying whether its target
 * is one no worker ever registered; hv_db_plan_read() sums them. Ten aggregates
 * and the function that looked the unregistered targets up cost
 * PostgreSQL, set up on every execution, about three times what this
 * does. A plan of a fleet or with hooks (the last column of its row says
 * so) is read with plan_read above. */
#define PLAN_NEEDS_FULL "p.parent_id IS NOT NULL OR " FLEET_PARENT " OR p.spec ? 'hooks'"
static const struct hv_stmt plan_read_rows = {
    "plan_read_rows",
    "SELECT true, p.id, to_json(p.name)::text, p.seed, p.state, to_json(p.created_at)::text, "
    "to_json(p.updated_at)::text, to_json(p.cancelled_at)::text, p.waiting::text, "
    "p.adaptive::text, p.spec::text, " PLAN_NEEDS_FULL ", NULL::bigint, NULL::bigint, "
    "NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text, "
    "to_json(p.ended_at)::text, NULL::text, NULL::bool, to_json(own.owner)::text FROM plans "
    "p" OWNER_JOIN
    "WHERE p.id = $1 UNION ALL (SELECT false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, k.total, k.queued, k.running, k.done, k.failed, k.cancelled, "
    "to_json(k.started_at)::text, to_json(k.state_at)::text, NULL::text, "
    "k.target_name, t.id IS NULL, NULL FROM plan_job_count_shards k LEFT JOIN targets t ON "
    "t.name = k.target_name WHERE k.plan_id = $1 ORDER BY k.target_name)",
    1};

/* plan_read_rows's columns. */
enum {
    PR_IS_PLAN,
    PR_ID,
    PR_NAME,
    PR_SEED,
    PR_STATE,
    PR_CREATED_AT,
    PR_UPDATED_AT,
    PR_CANCELLED_AT,
    PR_WAITING,
    PR_ADAPTIVE,
    PR_SPEC,
    PR_NEEDS_FULL,
    PR_TOTAL,
    PR_QUEUED,
    PR_RUNNING,
    PR_DONE,
    PR_FAILED,
    PR_CANCELLED_JOBS,
    PR_STARTED_AT,
    PR_STATE_AT,
    PR_ENDED_AT, /* the plan's row: its ended_at */
    PR_TARGET,
    PR_UNREGISTERED,
    PR_OWNER,
};

static const struct hv_stmt get_plan = {
    "plan_get",
    "SELECT (" SUMMARY_JSON ")::text, spec::text FROM plan_summaries p" OWNER_JOIN ENDED_JOIN
    "WHERE id = $1",
    1};

/* A list item is a summary with, for a fleet's child, its host and its
 * parent (both null for any other plan), so a list tells the children of
 * one fleet apart. */
static const struct hv_stmt list_plans = {
    "plan_list",
    "SELECT coalesce(json_agg(s.j ORDER BY s.id DESC), '[]')::text FROM "
    "(SELECT json_build_object(" SUMMARY_MEMBERS ", 'host', CASE WHEN parent_id IS NOT NULL "
    "THEN spec->'targets'->>'host' END, 'parent_id', parent_id) AS j, id FROM plan_summaries "
    "p" OWNER_JOIN ENDED_JOIN "WHERE ($1::text IS NULL OR p.status = $1) "
    " AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = p.id "
    "      AND j.target_name = $2)) "
    " AND ($3::text IS NULL OR p.name = $3) "
    " AND ($4::timestamptz IS NULL OR p.created_at >= $4::timestamptz) "
    " AND ($5::bigint IS NULL OR p.id < $5::bigint) "
    " ORDER BY id DESC LIMIT $6) s",
    6};

static const struct hv_stmt unregistered = {
    "targets_unregistered",
    "SELECT coalesce(json_agg(u.n ORDER BY u.i), '[]')::text FROM unnest($1::text[]) "
    "WITH ORDINALITY AS u(n, i) WHERE NOT EXISTS (SELECT 1 FROM targets t WHERE t.name = u.n)",
    1};

/* A fleet plan's side of its summary (migrations/030, hv_plan_fleet). */
static const struct hv_stmt fleet_of = {"plan_fleet_of", "SELECT hv_plan_fleet($1)::text", 1};

enum hv_db_status hv_db_plan_get(int64_t id, bool with_spec, json_t **out)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    json_t *spec = NULL;
    enum hv_db_status s = hv_db_json(&get_plan, params, out, &spec);
    json_t *fleet = NULL;
    if (s == HV_DB_OK)
        s = hv_db_json(&fleet_of, params, &fleet, NULL);
    if (s == HV_DB_OK)
        json_object_update(*out, fleet);
    json_decref(fleet);
    if (s == HV_DB_OK && with_spec)
        json_object_set_new(*out, "plan", spec);
    else
        json_decref(spec);
    return s;
}

enum hv_db_status hv_db_plan_list(const struct hv_plan_filter *f, json_t **out)
{
    char before[24], lim[16];
    const char *params[] = {f->status,
                            f->target,
                            f->name,
                            f->since,
                            f->before_id > 0 ? hv_db_int(before, sizeof before, f->before_id)
                                             : NULL,
                            hv_db_int(lim, sizeof lim, f->limit)};
    return hv_db_json(&list_plans, params, out, NULL);
}

enum hv_db_status hv_db_targets_unregistered(const char *const *names, size_t n, json_t **out)
{
    char *arr = hv_db_text_array(names, n);
    if (arr == NULL)
        return HV_DB_ERROR;
    const char *params[] = {arr};
    enum hv_db_status s = hv_db_json(&unregistered, params, out, NULL);
    free(arr);
    return s;
}

/* Cell c of row 0 of r, or "null" for an SQL NULL. */
static const char *cell(const PGresult *r, int c)
{
    return PQgetisnull(r, 0, c) ? "null" : PQgetvalue(r, 0, c);
}

/* Writes plan_read's row r as the answer's JSON to f. */
/* The summary's first members, as both writers of a plan read print them:
 * id, name, status, created, updated, started, finished, cancelled, seed,
 * owner. */
#define SUMMARY_HEAD                                                                               \
    "{\"id\":%s,\"name\":%s,\"status\":\"%s\",\"created_at\":%s,\"updated_at\":%s,"                \
    "\"started_at\":%s,\"finished_at\":%s,\"cancelled_at\":%s,\"seed\":%s,\"owner\":%s,"

static void plan_read_json(FILE *f, const PGresult *r)
{
    fprintf(f, SUMMARY_HEAD, cell(r, 0), cell(r, 1), cell(r, 2), cell(r, 3), cell(r, 4), cell(r, 5),
            cell(r, 6), cell(r, 7), cell(r, 8), cell(r, 21));
    fprintf(f,
            "\"jobs\":{\"total\":%s,\"queued\":%s,\"running\":%s,\"done\":%s,\"failed\":%s,"
            "\"cancelled\":%s},\"progress\":%s,\"waiting\":%s,\"rounds\":%s",
            cell(r, 9), cell(r, 10), cell(r, 11), cell(r, 12), cell(r, 13), cell(r, 14),
            cell(r, 15), cell(r, 16), cell(r, 17));
    /* A fleet's members, without their braces (none outside a fleet). */
    if (!PQgetisnull(r, 0, 18))
        fprintf(f, ",%s", PQgetvalue(r, 0, 18));
    fprintf(f, ",\"plan\":%s", cell(r, 19));
    if (!PQgetisnull(r, 0, 20))
        fprintf(f, ",\"hooks\":%s", PQgetvalue(r, 0, 20));
    fputc('}', f);
}

/* A plan's count rows summed: what plan_read's lateral aggregate gives. */
struct plan_sums {
    long long total, queued, running, done, failed, cancelled;
    const char *started_at, *state_at; /* JSON text; NULL: none */
    int unregistered;                  /* targets waited for that no worker ever registered */
};

/* Whether JSON timestamp a is later than b. Both are to_json texts of a
 * timestamptz in UTC (the server's sessions: db.c), so their order is
 * that of the text: the fraction, when there is one, is longer than the
 * '+' of the offset that ends one without. */
static bool ts_later(const char *a, const char *b)
{
    return strcmp(a, b) > 0;
}

/* Whether count row i of r is the first of its target's shard rows, and
 * the target, never registered, has queued jobs (the sum of its rows). */
static bool waits_unregistered(const PGresult *r, int i)
{
    const char *target = PQgetvalue(r, i, PR_TARGET);
    if (PQgetvalue(r, i, PR_UNREGISTERED)[0] != 't' ||
        (i > 1 && strcmp(PQgetvalue(r, i - 1, PR_TARGET), target) == 0))
        return false;
    long long queued = 0;
    for (int k = i; k < PQntuples(r) && strcmp(PQgetvalue(r, k, PR_TARGET), target) == 0; k++)
        queued += strtoll(PQgetvalue(r, k, PR_QUEUED), NULL, 10);
    return queued > 0;
}

/* Adds count row i of r to *sum. */
static void sum_row(struct plan_sums *sum, const PGresult *r, int i)
{
    long long *to[] = {&sum->total, &sum->queued, &sum->running,
                       &sum->done,  &sum->failed, &sum->cancelled};
    for (int c = 0; c < 6; c++)
        *to[c] += strtoll(PQgetvalue(r, i, PR_TOTAL + c), NULL, 10);
    if (!PQgetisnull(r, i, PR_STARTED_AT) &&
        (sum->started_at == NULL || ts_later(sum->started_at, PQgetvalue(r, i, PR_STARTED_AT))))
        sum->started_at = PQgetvalue(r, i, PR_STARTED_AT);
    if (!PQgetisnull(r, i, PR_STATE_AT) &&
        (sum->state_at == NULL || ts_later(PQgetvalue(r, i, PR_STATE_AT), sum->state_at)))
        sum->state_at = PQgetvalue(r, i, PR_STATE_AT);
    if (waits_unregistered(r, i))
        sum->unregistered++;
}

/* Writes s as a JSON string's inside, escaped as PostgreSQL's json
 * escapes it (so the text is what json_build_object gave). */
static void put_json_chars(FILE *f, const char *s)
{
    /* The characters written as a backslash and a letter, and the letters. */
    static const char special[] = "\"\\\b\f\n\r\t", letter[] = "\"\\bfnrt";
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        const char *at = strchr(special, ch);
        if (at != NULL)
            fprintf(f, "\\%c", letter[at - special]);
        else if (ch < ' ')
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
}

/* The waiting member of a plan whose queued jobs name targets no worker
 * ever registered (rows 1.. of r, in target order): as
 * hv_plan_waiting_unregistered (migrations/030) builds it. */
static void put_unregistered(FILE *f, const PGresult *r, const struct plan_sums *sum)
{
    fprintf(
        f,
        "{\"reason\" : \"target_unregistered\", \"since\" : %s, \"detail\" : \"waiting for target",
        PQgetvalue(r, 0, PR_CREATED_AT));
    fputs(sum->unregistered > 1 ? "s " : " ", f);
    int named = 0;
    for (int i = 1; i < PQntuples(r) && named < 5; i++) {
        if (!waits_unregistered(r, i))
            continue;
        if (named++ > 0)
            fputs(", ", f);
        put_json_chars(f, PQgetvalue(r, i, PR_TARGET));
    }
    if (sum->unregistered > 5)
        fprintf(f, " and %d more", sum->unregistered - 5);
    fputs(" (never registered)\"}", f);
}

/* Writes plan_read_rows's rows r as the answer's JSON to f: the same text
 * plan_read_json() writes for plan_read's row of the same plan. */
static void plan_rows_json(FILE *f, const PGresult *r)
{
    struct plan_sums sum = {0};
    for (int i = 1; i < PQntuples(r); i++)
        sum_row(&sum, r, i);
    /* The plan's stored state (migrations/041_lifecycle.sql). */
    const char *status = PQgetvalue(r, 0, PR_STATE);
    bool ended = strcmp(status, "queued") != 0 && strcmp(status, "running") != 0;
    const char *updated = PQgetvalue(r, 0, PR_UPDATED_AT);
    const char *cancelled_at = cell(r, PR_CANCELLED_AT);
    fprintf(f, SUMMARY_HEAD, cell(r, PR_ID), cell(r, PR_NAME), status, cell(r, PR_CREATED_AT),
            sum.state_at != NULL && ts_later(sum.state_at, updated) ? sum.state_at : updated,
            sum.started_at != NULL ? sum.started_at : "null", cell(r, PR_ENDED_AT), cancelled_at,
            cell(r, PR_SEED), cell(r, PR_OWNER));
    fprintf(
        f,
        "\"jobs\":{\"total\":%lld,\"queued\":%lld,\"running\":%lld,\"done\":%lld,\"failed\":%lld,"
        "\"cancelled\":%lld},\"progress\":",
        sum.total, sum.queued, sum.running, sum.done, sum.failed, sum.cancelled);
    /* round(ended::numeric / total, 4): halves away from zero. */
    if (sum.total == 0) {
        fputc('0', f);
    } else {
        long long ended_jobs = sum.done + sum.failed + sum.cancelled;
        long long q = (2 * ended_jobs * 10000 + sum.total) / (2 * sum.total);
        fprintf(f, "%lld.%04lld", q / 10000, q % 10000);
    }
    fputs(",\"waiting\":", f);
    if (ended)
        fputs("null", f);
    else if (!PQgetisnull(r, 0, PR_WAITING))
        fputs(PQgetvalue(r, 0, PR_WAITING), f);
    else if (sum.unregistered > 0)
        put_unregistered(f, r, &sum);
    else
        fputs("null", f);
    fprintf(f, ",\"rounds\":%s,\"plan\":%s}", cell(r, PR_ADAPTIVE), cell(r, PR_SPEC));
}

/* Whether plan_read_rows's rows r come as asked: the plan's own row,
 * then its count rows (an Append runs its parts in turn; were that ever
 * not so, the plan is read with plan_read instead). */
static bool rows_in_order(const PGresult *r)
{
    if (PQgetvalue(r, 0, PR_IS_PLAN)[0] != 't')
        return false;
    for (int i = 1; i < PQntuples(r); i++)
        if (PQgetvalue(r, i, PR_IS_PLAN)[0] != 'f')
            return false;
    return true;
}

/* Runs st for plan id and writes its answer with to_json into *answer.
 * With full (plan_read_rows), nothing is written when *full comes back
 * true: the plan is to be read with plan_read. */
static enum hv_db_status read_answer(struct hv_db *db, const struct hv_stmt *st, int64_t id,
                                     void (*to_json)(FILE *, const PGresult *), char **answer,
                                     bool *full)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, st, params, &r);
    if (s == HV_DB_OK && full != NULL)
        *full = !rows_in_order(r) || PQgetvalue(r, 0, PR_NEEDS_FULL)[0] == 't';
    if (s == HV_DB_OK && (full == NULL || !*full)) {
        size_t len = 0;
        FILE *f = open_memstream(answer, &len);
        if (f != NULL) {
            to_json(f, r);
            if (fclose(f) != 0) {
                free(*answer);
                *answer = NULL;
            }
        }
        if (*answer == NULL)
            s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_plan_read(int64_t id, char **answer)
{
    *answer = NULL;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    bool full = false;
    enum hv_db_status s = read_answer(db, &plan_read_rows, id, plan_rows_json, answer, &full);
    if (s == HV_DB_OK && full)
        s = read_answer(db, &plan_read, id, plan_read_json, answer, NULL);
    return s;
}

/* Tuning plans whose host is the target, newest first, that have ended
 * or produced results: the plans recommendations come from. */
static const struct hv_stmt tuned_on = {
    "plans_tuned_on",
    "SELECT (SELECT coalesce(json_agg(x.id ORDER BY x.id DESC), '[]') FROM (SELECT p.id "
    " FROM plans p WHERE p.spec->'targets'->>'host' = t.name AND p.spec->'factors' <> '{}' "
    " AND EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = p.id AND j.status = 'done') "
    " ORDER BY p.id DESC LIMIT $2) x)::text FROM targets t WHERE t.name = $1",
    2};

enum hv_db_status hv_db_plans_tuned_on(const char *target, int limit, json_t **ids)
{
    char lim[16];
    const char *p[] = {target, hv_db_int(lim, sizeof lim, limit)};
    return hv_db_json(&tuned_on, p, ids, NULL);
}

/* ---- A plan's owner, for the check before an action on it
 * (server/plan_owner.h). One statement of its own, apart from the reads
 * above: the rule is OWNER_JOIN's, the same the answers show. ---- */

static const struct hv_stmt owner_of = {
    "plan_owner", "SELECT owner_id, owner FROM plans p" OWNER_JOIN "WHERE p.id = $1", 1};

enum hv_db_status hv_db_plan_owner(int64_t id, int64_t *token_id, char *name, size_t len)
{
    *token_id = 0;
    if (len > 0)
        name[0] = '\0';
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, &owner_of, params, &r);
    if (s == HV_DB_OK && !PQgetisnull(r, 0, 0)) {
        *token_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        snprintf(name, len, "%s", PQgetvalue(r, 0, 1));
    }
    PQclear(r);
    return s;
}
