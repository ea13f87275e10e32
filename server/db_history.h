/* db_history.h — a metric's history on a target across plans and imports,
 * the change points found in it, and the history of the target's facts.
 *
 * A series is one metric of one workload (its kind, engine, params and
 * peer, whatever id a plan gave it; jobs.series_key is the MD5 of that
 * JSON, the series' "key") on one target, from each plan's default
 * configuration (configuration "") or the configurations of one name: a
 * point per round, the value of the series in that round as the report
 * reads it (hv_round_parts, migrations/047: a done job's ok result, the
 * client members of a group on the target their mean), ordered by when
 * the measurement ran (the round's first started_at: an import's own
 * date). Change points are computed by the caller and kept per series
 * with the state of the points they came from ("rule:count:largest result
 * id:sum of result ids", of every result of the points, rule a mark of
 * hv_round_parts' definition) and their count and time range; a read
 * whose state matches uses them as they are. */
#ifndef HV_SERVER_DB_HISTORY_H
#define HV_SERVER_DB_HISTORY_H

#include "db.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/** What to read of a target's history. */
struct hv_history_query {
    int64_t target_id;
    const char *metric;        /**< the metric's name */
    const char *configuration; /**< NULL: each plan's default configuration */
    const char *workload;      /**< NULL, or only jobs of this workload id */
    long max_points;           /**< past it a series is cut into time buckets */
    const char *from, *to;     /**< a window of time (ISO 8601; NULL: open), or both NULL */
};

/** Reads the series of q as a new JSON object in *out, in one pass over
 *  the points: {"target": name, "series": [{"key", "workload", "unit",
 *  "higher_is_better", "n", "first", "last", "state", "downsampled",
 *  "points", "series_id", "cached_state", "change_points"}]}, series in
 *  the order of their keys. A point is {"at", "value", "n": 1, "plan_id",
 *  "result_id"}.
 *  A series kept with more than max_points points has its kept time range
 *  cut into max_points equal buckets, each non-empty one {"at" (its first
 *  point), "until" (its last), "n", "value" (mean), "min", "max"} (or a
 *  point when it holds one); points outside that range fall into buckets
 *  past either end, and a series not kept yet lists every point: read
 *  again once the series' state was stored (hv_db_history_store) when
 *  cached_state differed from state. series_id, cached_state and
 *  change_points (the active ones, as hv_db_history_store answers them)
 *  are those kept for the series, null and [] before its first
 *  computation. With q->from or q->to, only the points in that window,
 *  cut into max_points buckets of the window when there are more (nothing
 *  kept is used). HV_DB_NONE: no such target. */
enum hv_db_status hv_db_history_read(const struct hv_history_query *q, json_t **out);

/** The points kept with each series of a quick read, by the series'
 *  index in its answer. */
struct hv_history_kept {
    size_t n;
    char **points; /**< JSON text (an array), or NULL when none fits */
};

/** hv_db_history_read without grouping the points: the same answer with
 *  every series' "points" null, and in *kept the points
 *  hv_db_history_keep_points kept for the series' present state and
 *  q->max_points, as their JSON text (NULL where none were kept for them).
 *  Costs about a GROUP BY of the points. Free *kept with
 *  hv_history_kept_free. */
enum hv_db_status hv_db_history_quick(const struct hv_history_query *q, json_t **out,
                                      struct hv_history_kept *kept);

/** Frees what *k holds (not k). */
void hv_history_kept_free(struct hv_history_kept *k);

/** The mark of target_id's history (its name and a number that moves
 *  whenever anything its history answers read may have changed:
 *  migrations/028_history_marks.sql), as new text in *mark (free it).
 *  HV_DB_NONE when there is no such target. */
enum hv_db_status hv_db_history_mark(int64_t target_id, char **mark);

/** Keeps points (a series' points as hv_db_history_read gave them for
 *  max_points in state) with series series_id, for hv_db_history_quick. */
enum hv_db_status hv_db_history_keep_points(int64_t series_id, long max_points, const char *state,
                                            const json_t *points);

/** The values of one series, in time order, for change-point detection. */
struct hv_history_values {
    size_t n;
    double *t;          /**< seconds since 1970 (UTC) of each point */
    double *value;      /**< the metric's value */
    int64_t *result_id; /**< the point's result */
    int64_t *plan_id;   /**< and its plan */
    char state[80];     /**< the series' state, as hv_db_history_read gives it */
};

/** Reads the values of the series key (jobs.series_key) of q into *out
 *  (arrays malloc'd; free with hv_history_values_free). */
enum hv_db_status hv_db_history_values(const struct hv_history_query *q, const char *key,
                                       struct hv_history_values *out);

/** Frees the arrays of v (not v). */
void hv_history_values_free(struct hv_history_values *v);

/** A change point found in a series, to store. */
struct hv_history_cp {
    size_t index;         /**< the first point of the new regime */
    double at, before_at; /**< its time and the time of the point before it */
    double match_lo;      /**< a kept change point between these times is */
    double match_hi;      /**< the same one, found again */
    int64_t result_id;    /**< the first point's result and plan */
    int64_t plan_id;      /**<   */
    size_t n_before;      /**< points since the previous change point */
    size_t n_after;       /**< points until the next */
    double mean_before;   /**< their means */
    double mean_after;    /**<   */
    double rel_change;    /**< mean_after/mean_before − 1 (NaN: undefined) */
    double q, p;          /**< E-statistic and permutation p-value */
};

/** A series to store. */
struct hv_history_series {
    const char *key;      /**< jobs.series_key */
    const char *workload; /**< its workload, JSON text */
};

/** Stores the change points found[0..n) of series of q computed from the
 *  values v (their state, count and time range are kept with the series),
 *  in one transaction: a kept change point
 *  whose time lies in [match_lo, match_hi] of a found one keeps its id
 *  (and acknowledgement) and takes the found figures; the others found are
 *  new; kept ones not found again become inactive. Each stored point gets
 *  its context: the facts versions of the target in force at before_at and
 *  at, the facts that differ between them, and the tuning changes made on
 *  the target in between. *out (a new JSON array) gets the active change
 *  points of the series in time order. */
enum hv_db_status hv_db_history_store(const struct hv_history_query *q,
                                      const struct hv_history_series *series,
                                      const struct hv_history_values *v,
                                      const struct hv_history_cp *found, size_t n, json_t **out);

/** Acknowledges change point id for token_id (the first acknowledgement
 *  stays). *out gets the change point with its series ({"target",
 *  "metric", "workload", "configuration"}). HV_DB_NONE: no such change
 *  point. */
enum hv_db_status hv_db_change_point_ack(int64_t id, int64_t token_id, json_t **out);

/** Which metrics target_id ever measured (a value in any result of its
 *  jobs, whatever their status, configuration or workload), as a new
 *  object {"measured": whether metric is one, "total": how many there
 *  are, "metrics": the first max of their names, sorted}. */
enum hv_db_status hv_db_history_metrics(int64_t target_id, const char *metric, size_t max,
                                        json_t **out);

/** The versions of target_id's facts, newest first, as a new JSON array
 *  of {"id", "fingerprint", "facts", "first_seen", "last_seen"}.
 *  HV_DB_NONE: no such target. */
enum hv_db_status hv_db_target_facts_history(int64_t target_id, json_t **out);

/** What to read of a fleet's history (GET /api/v1/history): the host
 *  targets whose labels hold selector, one series of metric each. */
struct hv_fleet_history_query {
    const json_t *selector; /**< label selector (lib/selector.h) */
    const char *metric;     /**< the metric's name */
    const char *key;        /**< a series key (jobs.series_key); NULL: the one most hosts have */
    double from, to;        /**< the window, seconds since 1970 */
    long bucket_s;          /**< bucket length, seconds */
    double margin_pct;      /**< a host whose ratio to the median lies beyond it is an outlier */
};

/** How many host targets' labels hold selector, into *n, and in *mark
 *  (new text: free it) what moves whenever a fleet history of them may
 *  answer otherwise: which hosts they are and their history marks
 *  (hv_db_history_mark). */
enum hv_db_status hv_db_fleet_mark(const json_t *selector, long *n, char **mark);

/** The fleet history of q, as JSON text in *out (free out->res with
 *  hv_db_text_free), one statement: {"from", "to" (ISO 8601), "bucket_s",
 *  "metric", "key", "workload", "unit", "higher_is_better", "series_keys":
 *  [{"key", "workload", "hosts", "points"}] (every series of the metric
 *  the hosts have in the window, most hosts first), "hosts": [{"id",
 *  "name", "ratio", "outlier", "points": [[t, value, n]], "change_points":
 *  [{"id", "at", "change_pct", "status"}]}], "median": [[t, p50, p25,
 *  p75, hosts]]}. A point is the mean of the host's values (each plan's
 *  default configuration, one per round as a target's history reads
 *  them) in the bucket starting t (seconds since 1970), n of them; the
 *  median row the median and quartiles of the hosts' bucket means. A
 *  host's ratio is the median over its buckets of its mean over the
 *  fleet's median; hosts come outliers first, then by how far their ratio
 *  lies from 1, then by name; those with no point in the window last
 *  (ratio null). Change points are those the target's history reads found
 *  (hv_db_history_store) in the window, of the same series. */
enum hv_db_status hv_db_fleet_history(const struct hv_fleet_history_query *q,
                                      struct hv_db_text *out);

#endif
