/* h_history.c — a metric's history on a target, across plans and imports:
 * GET /api/v1/targets/{id}/history, with its change points (E-Divisive
 * means, history_cp.h) and what changed on the target around each;
 * acknowledging a change point (POST /api/v1/change-points/{id}/ack); and
 * the versions of a target's facts (GET /api/v1/targets/{id}/facts); and
 * a metric's history across a fleet (GET /api/v1/history?selector=&metric=
 * &from=&to=): the host targets whose labels hold the selector, each
 * host's series cut into time buckets in one statement (db_history.h), the
 * fleet's median and quartiles per bucket, each host's ratio to it and the
 * change points its own history reads found.
 *
 * Change points are computed when a series is read and its points changed
 * since the last computation (db_history.h keeps them with the state of
 * the points), and the points as answered are kept with them, so a read of
 * an unchanged series costs one statement that counts its points.
 *
 * Above that, the answers rendered are kept in memory (a bounded number,
 * the least recently sent dropped first) per target and query, with the
 * target's history mark read before rendering them
 * (migrations/028_history_marks.sql: it moves with every result, import,
 * job done, change point found or acknowledged of the target): while the
 * mark is the same the kept text is sent, and the common read costs one
 * lookup of one row. */
#include "compare.h"
#include "db_history.h"
#include "db_values.h"
#include "handlers.h"
#include "history_cp.h"
#include "log.h"
#include "query.h"
#include "result.h"
#include "selector.h"
#include "timeutil.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** Points a series shows by default before it is cut into buckets. */
#define HISTORY_MAX_POINTS_DEFAULT 2000
#define HISTORY_MAX_POINTS_MIN     10
#define HISTORY_MAX_POINTS_MAX     100000

/** History answers kept in memory, and the bytes they may take. */
#define ANSWERS_MAX   64
#define ANSWERS_BYTES (64u << 20)

/* An answer kept: the text sent for key (target and query) while the
 * target's history mark was mark. */
struct kept_answer {
    char *key, *mark, *text;
    size_t len;
    unsigned long used; /* when it was last kept or sent */
};

static struct kept_answer answers[ANSWERS_MAX];
static size_t answers_bytes;
static unsigned long answers_clock;
static pthread_mutex_t answers_lock = PTHREAD_MUTEX_INITIALIZER;

static void answer_drop(struct kept_answer *a)
{
    answers_bytes -= a->len;
    free(a->key);
    free(a->mark);
    free(a->text);
    memset(a, 0, sizeof *a);
}

/* The key of q's answers: every parameter that shapes the answer, each
 * with its length (NULL as "-"), so no two queries share one. */
static char *answer_key(const struct hv_history_query *q)
{
    const char *part[] = {q->metric, q->workload, q->configuration, q->from, q->to};
    char *key = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&key, &len);
    if (f == NULL)
        return NULL;
    fprintf(f, "%lld/%ld", (long long)q->target_id, q->max_points);
    for (size_t i = 0; i < sizeof part / sizeof *part; i++) {
        if (part[i] == NULL)
            fputs("/-", f);
        else
            fprintf(f, "/%zu:%s", strlen(part[i]), part[i]);
    }
    if (fclose(f) != 0) {
        free(key);
        return NULL;
    }
    return key;
}

/* A copy of the answer kept for key at mark, or NULL. */
static char *answer_find(const char *key, const char *mark)
{
    char *text = NULL;
    pthread_mutex_lock(&answers_lock);
    for (size_t i = 0; i < ANSWERS_MAX; i++) {
        struct kept_answer *a = &answers[i];
        if (a->key == NULL || strcmp(a->key, key) != 0)
            continue;
        if (strcmp(a->mark, mark) == 0) {
            a->used = ++answers_clock;
            text = strdup(a->text);
        } else {
            answer_drop(a); /* of a state gone */
        }
        break;
    }
    pthread_mutex_unlock(&answers_lock);
    return text;
}

/* Keeps a copy of text as the answer for key at mark, in place of the one
 * kept for key, else of the least recently used, and drops the least
 * recently used others while they take more than ANSWERS_BYTES. */
static void answer_keep(const char *key, const char *mark, const char *text)
{
    size_t len = strlen(text);
    if (len > ANSWERS_BYTES / 4)
        return;
    struct kept_answer n = {strdup(key), strdup(mark), strdup(text), len, 0};
    if (n.key == NULL || n.mark == NULL || n.text == NULL) {
        free(n.key);
        free(n.mark);
        free(n.text);
        return;
    }
    pthread_mutex_lock(&answers_lock);
    size_t slot = ANSWERS_MAX;
    for (size_t i = 0; i < ANSWERS_MAX && slot == ANSWERS_MAX; i++)
        if (answers[i].key != NULL && strcmp(answers[i].key, key) == 0)
            slot = i;
    for (size_t i = 0; i < ANSWERS_MAX && slot == ANSWERS_MAX; i++)
        if (answers[i].key == NULL)
            slot = i;
    if (slot == ANSWERS_MAX) {
        slot = 0;
        for (size_t i = 1; i < ANSWERS_MAX; i++)
            if (answers[i].used < answers[slot].used)
                slot = i;
    }
    if (answers[slot].key != NULL)
        answer_drop(&answers[slot]);
    n.used = ++answers_clock;
    answers[slot] = n;
    answers_bytes += len;
    while (answers_bytes > ANSWERS_BYTES) {
        size_t old = ANSWERS_MAX;
        for (size_t i = 0; i < ANSWERS_MAX; i++)
            if (i != slot && answers[i].key != NULL &&
                (old == ANSWERS_MAX || answers[i].used < answers[old].used))
                old = i;
        if (old == ANSWERS_MAX)
            break;
        answer_drop(&answers[old]);
    }
    pthread_mutex_unlock(&answers_lock);
}

/* Computes and stores the change points of series (its points changed
 * since they were last computed), with its state, count and time range. */
static enum hv_db_status refresh(const struct hv_history_query *q, const json_t *series)
{
    const char *key = json_string_value(json_object_get(series, "key"));
    char *workload = json_dumps(json_object_get(series, "workload"), JSON_COMPACT);
    if (key == NULL || workload == NULL) {
        free(workload);
        return HV_DB_ERROR;
    }
    struct hv_history_values v;
    enum hv_db_status s = hv_db_history_values(q, key, &v);
    struct hv_history_cp found[HV_HISTORY_MAX_CP];
    size_t k = 0;
    if (s == HV_DB_OK) {
        enum hv_stat_err e = hv_history_detect(&v, found, HV_HISTORY_MAX_CP, &k);
        if (e != HV_STAT_OK) {
            hv_error("history: change points of %s on target %lld: %s", q->metric,
                     (long long)q->target_id, hv_stat_err_str(e));
            s = HV_DB_ERROR;
        }
    }
    json_t *list = NULL;
    struct hv_history_series hs = {key, workload};
    if (s == HV_DB_OK)
        s = hv_db_history_store(q, &hs, &v, found, k, &list);
    json_decref(list);
    hv_history_values_free(&v);
    free(workload);
    return s;
}

/* Refreshes every series whose points changed since their change points
 * were computed; *again is set when one was (its buckets and change points
 * are to be read again). */
static enum hv_db_status refresh_changed(const struct hv_history_query *q, const json_t *doc,
                                         bool *again)
{
    size_t i;
    const json_t *series;
    json_array_foreach(json_object_get(doc, "series"), i, series)
    {
        const char *state = json_string_value(json_object_get(series, "state"));
        const char *cached = json_string_value(json_object_get(series, "cached_state"));
        if (cached != NULL && state != NULL && strcmp(state, cached) == 0)
            continue;
        enum hv_db_status s = refresh(q, series);
        if (s != HV_DB_OK)
            return s;
        *again = true;
    }
    return HV_DB_OK;
}

/* Whether every series of doc (hv_db_history_quick's) is as it was when
 * its change points were computed, with points kept for it. */
static bool all_kept(const json_t *doc, const struct hv_history_kept *kept)
{
    size_t i;
    const json_t *series;
    json_array_foreach(json_object_get(doc, "series"), i, series)
    {
        const char *state = json_string_value(json_object_get(series, "state"));
        const char *cached = json_string_value(json_object_get(series, "cached_state"));
        if (cached == NULL || state == NULL || strcmp(state, cached) != 0 || i >= kept->n ||
            kept->points[i] == NULL)
            return false;
    }
    return true;
}

/* Appends text[0..len) to *buf (size *len_buf, capacity *cap). Returns
 * false when memory runs out. */
static bool append(char **buf, size_t *used, size_t *cap, const char *text, size_t len)
{
    if (*used + len + 1 > *cap) {
        size_t bigger = (*used + len + 1) * 2;
        char *p = realloc(*buf, bigger);
        if (p == NULL)
            return false;
        *buf = p;
        *cap = bigger;
    }
    memcpy(*buf + *used, text, len);
    *used += len;
    (*buf)[*used] = '\0';
    return true;
}

/* Appends the compact JSON of object o without its closing brace. */
static bool append_open(char **buf, size_t *used, size_t *cap, const json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT);
    size_t len = text != NULL ? strlen(text) : 0;
    bool ok = len > 0 && text[len - 1] == '}' && append(buf, used, cap, text, len - 1);
    free(text);
    return ok;
}

/* The answer's text: answer (without "series") with each series of list
 * (without "points") followed by its kept points, as they were kept: a
 * long history's points are passed on, never parsed again. NULL when
 * memory runs out. */
static char *splice(const json_t *answer, const json_t *list, const struct hv_history_kept *kept)
{
    size_t used = 0, cap = 4096;
    char *buf = malloc(cap);
    bool ok = buf != NULL && append_open(&buf, &used, &cap, answer) &&
              append(&buf, &used, &cap, ",\"series\":[", 11);
    size_t i;
    const json_t *series;
    json_array_foreach(list, i, series)
    {
        json_t *bare = json_copy((json_t *)series);
        if (bare != NULL)
            json_object_del(bare, "points");
        ok = ok && bare != NULL && (i == 0 || append(&buf, &used, &cap, ",", 1)) &&
             append_open(&buf, &used, &cap, bare) &&
             append(&buf, &used, &cap, ",\"points\":", 10) &&
             append(&buf, &used, &cap, kept->points[i], strlen(kept->points[i])) &&
             append(&buf, &used, &cap, "}", 1);
        json_decref(bare);
    }
    ok = ok && append(&buf, &used, &cap, "]}", 2);
    if (!ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Reads the series of q grouping their points, after refreshing the change
 * points of those whose points changed, and keeps each series' points for
 * the reads that find it unchanged. Replaces *doc. */
static enum hv_db_status read_full(const struct hv_history_query *q, json_t **doc)
{
    bool again = false;
    enum hv_db_status s = refresh_changed(q, *doc, &again);
    json_decref(*doc);
    *doc = NULL;
    if (s == HV_DB_OK)
        s = hv_db_history_read(q, doc);
    /* A series refreshed just now was cut into buckets over its old range:
     * read once more over the range stored. */
    if (s == HV_DB_OK && again) {
        json_decref(*doc);
        *doc = NULL;
        s = hv_db_history_read(q, doc);
    }
    size_t i;
    const json_t *series;
    json_array_foreach(s == HV_DB_OK ? json_object_get(*doc, "series") : NULL, i, series)
    {
        const char *state = json_string_value(json_object_get(series, "state"));
        const char *cached = json_string_value(json_object_get(series, "cached_state"));
        json_int_t id = json_integer_value(json_object_get(series, "series_id"));
        /* Kept only when the change points are of the same points, and
         * never a window's. */
        if (q->from == NULL && q->to == NULL && id > 0 && state != NULL && cached != NULL &&
            strcmp(state, cached) == 0)
            hv_db_history_keep_points(id, q->max_points, state, json_object_get(series, "points"));
    }
    return s;
}

/* The answer's form of a series read: without what only the cache needs;
 * counts its new change points into *fresh. */
static void tidy(json_t *series, size_t *fresh)
{
    json_object_del(series, "key");
    json_object_del(series, "state");
    json_object_del(series, "cached_state");
    json_object_del(series, "series_id");
    size_t i;
    json_t *cp;
    json_array_foreach(json_object_get(series, "change_points"), i, cp)
    {
        const char *status = json_string_value(json_object_get(cp, "status"));
        if (status != NULL && strcmp(status, "new") == 0)
            (*fresh)++;
    }
}

/** Metric names an unknown_metric answer lists at most. */
#define METRICS_LISTED 50

/* Whether the target of q ever measured q's metric, in any configuration,
 * workload or time: when it did not (a typo), answers 404 unknown_metric
 * naming the metrics it has (the first METRICS_LISTED by name in "metrics",
 * their number in "metrics_total") and returns false; also false when the
 * question failed, answered. */
static bool measured(struct hv_request *req, const struct hv_history_query *q, const json_t *target)
{
    json_t *m = NULL;
    enum hv_db_status s = hv_db_history_metrics(q->target_id, q->metric, METRICS_LISTED, &m);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return false;
    }
    if (json_is_true(json_object_get(m, "measured"))) {
        json_decref(m);
        return true;
    }
    json_t *names = json_object_get(m, "metrics");
    json_int_t total = json_integer_value(json_object_get(m, "total"));
    char *detail = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&detail, &len);
    if (f != NULL) {
        fprintf(f, "%s never measured %s; ", json_string_value(target), q->metric);
        if (total == 0)
            fputs("it has measured nothing yet", f);
        else
            fputs("it has: ", f);
        size_t i;
        const json_t *n;
        json_array_foreach(names, i, n)
        {
            fprintf(f, "%s%s", i > 0 ? ", " : "", json_string_value(n));
        }
        if ((size_t)total > json_array_size(names))
            fprintf(f, " and %lld more", (long long)total - (long long)json_array_size(names));
        if (fclose(f) != 0) {
            free(detail);
            detail = NULL;
        }
    }
    hv_reply_problem(req, HV_E_UNKNOWN_METRIC, detail != NULL ? detail : "metric never measured",
                     NULL);
    /* The list as data too, for a client to offer the right name. */
    json_object_set(req->reply, "metrics", names);
    json_object_set_new(req->reply, "metrics_total", json_integer(total));
    free(detail);
    json_decref(m);
    return false;
}

void hv_h_target_history(struct hv_request *req)
{
    json_t *errors = json_array();
    struct hv_history_query q = {.target_id = req->ids[0]};
    hv_query_str(req, "metric", 128, &q.metric, errors);
    hv_query_str(req, "workload", 64, &q.workload, errors);
    hv_query_str(req, "configuration", 512, &q.configuration, errors);
    hv_query_int(req, "max_points", HISTORY_MAX_POINTS_MIN, HISTORY_MAX_POINTS_MAX,
                 HISTORY_MAX_POINTS_DEFAULT, &q.max_points, errors);
    hv_query_time(req, "from", &q.from, errors);
    hv_query_time(req, "to", &q.to, errors);
    if (q.from != NULL && q.to != NULL && hv_iso8601_seconds(q.from) > hv_iso8601_seconds(q.to))
        hv_errors_add(errors, "to", "must not be before from");
    if (q.metric == NULL && hv_req_query(req, "metric") == NULL)
        hv_errors_add(errors, "metric", "is required: the metric whose history to show");
    else if (q.metric != NULL && q.metric[0] == '\0')
        hv_errors_add(errors, "metric", "must not be empty");
    if (hv_query_failed(req, errors))
        return;
    /* The target's mark is read before anything else: an answer rendered
     * from what a later write changed is kept with the mark before it, so
     * it is never sent once that write is seen. */
    char *key = answer_key(&q), *mark = NULL;
    enum hv_db_status s = key != NULL ? hv_db_history_mark(q.target_id, &mark) : HV_DB_ERROR;
    char *text = s == HV_DB_OK ? answer_find(key, mark) : NULL;
    if (text != NULL || s != HV_DB_OK) {
        if (text != NULL)
            hv_reply_text(req, 200, "application/json", text);
        else if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no target with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        free(key);
        free(mark);
        return;
    }
    json_t *doc = NULL;
    struct hv_history_kept kept;
    s = hv_db_history_quick(&q, &doc, &kept);
    /* A window is read from the points each time; the series' change
     * points are brought up to date first all the same. */
    bool window = q.from != NULL || q.to != NULL;
    bool quick = s == HV_DB_OK && !window && all_kept(doc, &kept);
    if (s == HV_DB_OK && !quick)
        s = read_full(&q, &doc);
    if (s != HV_DB_OK) {
        json_decref(doc);
        hv_history_kept_free(&kept);
        free(key);
        free(mark);
        if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no target with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        return;
    }
    json_t *list = json_object_get(doc, "series");
    if (json_array_size(list) == 0 && !measured(req, &q, json_object_get(doc, "target"))) {
        json_decref(doc);
        hv_history_kept_free(&kept);
        free(key);
        free(mark);
        return;
    }
    size_t i, fresh = 0;
    json_t *series;
    json_array_foreach(list, i, series)
    {
        tidy(series, &fresh);
    }
    json_t *answer =
        json_pack("{s:I,s:O,s:s,s:s?,s:s?,s:I,s:I}", "target_id", (json_int_t)q.target_id, "target",
                  json_object_get(doc, "target"), "metric", q.metric, "workload", q.workload,
                  "configuration", q.configuration, "max_points", (json_int_t)q.max_points,
                  "new_change_points", (json_int_t)fresh);
    if (answer != NULL)
        json_object_set_new(answer, "excluded",
                            json_pack("{s:I,s:s}", "values",
                                      json_integer_value(json_object_get(doc, "excluded")),
                                      "reason", HV_SQL_EXCLUDED_REASON));
    if (answer != NULL && q.from != NULL)
        json_object_set_new(answer, "from", json_string(q.from));
    if (answer != NULL && q.to != NULL)
        json_object_set_new(answer, "to", json_string(q.to));
    if (quick) {
        text = answer != NULL ? splice(answer, list, &kept) : NULL;
    } else if (answer != NULL && json_object_set(answer, "series", list) == 0) {
        text = json_dumps(answer, JSON_COMPACT);
    }
    json_decref(answer);
    if (text != NULL) {
        answer_keep(key, mark, text);
        hv_reply_text(req, 200, "application/json", text);
    } else {
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
    }
    json_decref(doc);
    hv_history_kept_free(&kept);
    free(key);
    free(mark);
}

void hv_h_change_point_ack(struct hv_request *req)
{
    json_t *cp = NULL;
    enum hv_db_status s = hv_db_change_point_ack(req->ids[0], req->token_id, &cp);
    hv_reply_one(req, s, cp, "no change point with this id");
}

void hv_h_target_facts(struct hv_request *req)
{
    json_t *items = NULL;
    enum hv_db_status s = hv_db_target_facts_history(req->ids[0], &items);
    hv_reply_items(req, s, items, "no target with this id");
}

/** The most hosts one answer draws: 500 hosts × 200 points is some 4 MB. */
#define FLEET_HISTORY_MAX_HOSTS 1000
/** The most points a host's series has in any window. */
#define FLEET_HISTORY_POINTS 200
/** The window when from is not given: the 30 days before to. */
#define FLEET_HISTORY_DEFAULT_S (30 * 86400.0)
/** The longest window: ten years. */
#define FLEET_HISTORY_MAX_S (3660 * 86400.0)

/* Bucket lengths a reader can name, shortest first: the shortest at
 * least a window's FLEET_HISTORY_POINTS-th part is the window's. */
static const long buckets_s[] = {60,    300,    900,    1800,    3600,    3 * 3600, 6 * 3600, 43200,
                                 86400, 172800, 604800, 1209600, 2592000, 7776000,  31536000};

/* The bucket of a window of span seconds. */
static long bucket_of(double span)
{
    size_t n = sizeof buckets_s / sizeof *buckets_s;
    for (size_t i = 0; i < n; i++) {
        if (span / (double)buckets_s[i] <= FLEET_HISTORY_POINTS)
            return buckets_s[i];
    }
    return buckets_s[n - 1];
}

/* The key of a fleet history's answers: its selector (normalised JSON),
 * metric, series key, window and margin, each with its length. */
static char *fleet_key(const struct hv_fleet_history_query *q)
{
    char *sel = json_dumps(q->selector, JSON_COMPACT | JSON_SORT_KEYS);
    char *key = NULL;
    size_t len = 0;
    FILE *f = sel != NULL ? open_memstream(&key, &len) : NULL;
    if (f == NULL) {
        free(sel);
        return NULL;
    }
    fprintf(f, "fleet/%zu:%s/%zu:%s/%s/%.3f/%.3f/%.17g", strlen(sel), sel, strlen(q->metric),
            q->metric, q->key != NULL ? q->key : "-", q->from, q->to, q->margin_pct);
    free(sel);
    if (fclose(f) != 0) {
        free(key);
        return NULL;
    }
    return key;
}

void hv_h_fleet_history(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *selector, *from_s, *to_s;
    struct hv_fleet_history_query q = {0};
    hv_query_str(req, "selector", 600, &selector, errors);
    hv_query_str(req, "metric", 128, &q.metric, errors);
    hv_query_str(req, "key", 64, &q.key, errors);
    hv_query_time(req, "from", &from_s, errors);
    hv_query_time(req, "to", &to_s, errors);
    bool has_margin;
    hv_query_number(req, "margin_pct", 0, 100, HV_MARGIN_PCT_DEFAULT, &q.margin_pct, &has_margin,
                    errors);
    char why[200];
    json_t *sel = NULL;
    if (selector == NULL && hv_req_query(req, "selector") == NULL)
        hv_errors_add(errors, "selector", "is required: a label selector such as pool=batch");
    else if (selector != NULL && (sel = hv_selector_parse(selector, why, sizeof why)) == NULL)
        hv_errors_add(errors, "selector",
                      "must be a label selector such as pool=batch,cpu=epyc: %s", why);
    if (q.metric == NULL && hv_req_query(req, "metric") == NULL)
        hv_errors_add(errors, "metric", "is required: the metric whose history to show");
    else if (q.metric != NULL && !hv_metric_name_check(q.metric, why, sizeof why))
        hv_errors_add(errors, "metric", "must be a metric name: %s", why);
    q.to = to_s != NULL ? hv_iso8601_seconds(to_s) : (double)time(NULL);
    q.from = from_s != NULL ? hv_iso8601_seconds(from_s) : q.to - FLEET_HISTORY_DEFAULT_S;
    if (!(q.from < q.to))
        hv_errors_add(errors, "to", "must be after from");
    else if (q.to - q.from > FLEET_HISTORY_MAX_S)
        hv_errors_add(errors, "from", "must be at most 3660 days before to");
    long hosts = 0;
    char *mark = NULL;
    if (sel != NULL && json_array_size(errors) == 0) {
        enum hv_db_status s = hv_db_fleet_mark(sel, &hosts, &mark);
        if (s != HV_DB_OK) {
            json_decref(errors);
            json_decref(sel);
            hv_reply_db_failure(req, s);
            return;
        }
        if (hosts > FLEET_HISTORY_MAX_HOSTS)
            hv_errors_add(errors, "selector",
                          "matches %ld hosts; one answer shows at most %d: narrow the selector",
                          hosts, FLEET_HISTORY_MAX_HOSTS);
    }
    if (hv_query_failed(req, errors)) {
        json_decref(sel);
        free(mark);
        return;
    }
    q.selector = sel;
    q.bucket_s = bucket_of(q.to - q.from);
    /* The hosts' mark was read before the answer: kept with it, the
     * answer is sent while no result, import or change point of theirs
     * (and no host joining or leaving the selector) moved it. */
    char *key = fleet_key(&q);
    char *text = key != NULL ? answer_find(key, mark) : NULL;
    if (text != NULL) {
        hv_reply_text(req, 200, "application/json", text);
    } else {
        struct hv_db_text t;
        enum hv_db_status s = hv_db_fleet_history(&q, &t);
        if (s != HV_DB_OK) {
            hv_reply_db_failure(req, s);
        } else {
            if (key != NULL)
                answer_keep(key, mark, t.text);
            struct hv_kept_text k = {"", t.text, t.len, "", hv_db_text_free, t.res};
            hv_reply_kept(req, 200, &k);
        }
    }
    json_decref(sel);
    free(key);
    free(mark);
}
