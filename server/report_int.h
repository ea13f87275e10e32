/* report_int.h — what the report's modules share (report.h lists them):
 * the per-round values of each configuration ("arms"), the comparisons
 * recommendations are made of, and JSON helpers. Internal to server/report*.c
 * and their unit test. */
#ifndef HV_SERVER_REPORT_INT_H
#define HV_SERVER_REPORT_INT_H

#include "compare.h"
#include "sequential.h"
#include "report_data.h"
#include "stats.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One configuration's values of one workload and metric on one side,
 *  one per round: the mean over the side's targets of that round (each
 *  guest alone, or a group already averaged). What comparisons,
 *  overheads and the stop rule read: n counts rounds. */
struct hv_arm {
    size_t config, workload;
    enum hv_side side;
    const char *metric, *unit; /**< borrowed from a series */
    bool higher_is_better;
    bool primary; /**< a primary metric of the workload's engine */
    size_t n;
    double *values; /**< per round (owned) */
    int *rounds;    /**< their round numbers (owned) */
    int64_t *jobs;  /**< every job behind the values (owned) */
    size_t n_jobs;
    bool finite;           /**< every value finite (else no summary) */
    struct hv_summary sum; /**< of the values (when finite) */
    bool positive;         /**< every value > 0: log is valid */
    struct hv_log_group log;
};

/** A comparison of a factor level with its factor's default. */
struct hv_rcmp {
    const struct hv_arm *arm; /**< an arm of the level: workload, metric, side */
    size_t factor, level;
    bool has_ratio;
    bool paired; /**< r is of complete rounds paired (hv_effect_paired), else Welch */
    struct hv_ratio r;
    bool usable;             /**< its interval is worth printing (hv_contrast_note) */
    enum hv_verdict verdict; /**< its own 95 % interval against the margin;
                                  inconclusive when not usable */
    enum hv_verdict family;  /**< after Holm over the family (inconclusive when not usable) */
    double p_adj;
    json_t *json; /**< its object in the report (borrowed) */
};

/** The state of one report being built. */
struct hv_rctx {
    const struct hv_rdata *d;
    struct hv_arm *arms; /**< sorted by workload, metric, side, configuration */
    size_t n_arms;
    size_t *by_levels; /**< configuration indexes sorted by their levels */
    struct hv_rcmp *cmps;
    size_t n_cmps;
    json_t *warnings;    /**< [{"kind", "message"}] */
    bool multi_workload; /**< more than one variant: sentences name the workload */
    /** The look the family verdicts are read at (hv_rcompare): the plan's
     *  latest round with values, kept within repetitions min..max. */
    int look;
    double look_level;      /**< its two-sided level (share alpha), 0 without comparisons */
    enum hv_seq_stop after; /**< the stop rule's decision at the look (hv_seq_next) */
};

/* report_arms.c */

/** Builds c->arms and c->by_levels from c->d. Returns 0 or -1. */
int hv_rarms_build(struct hv_rctx *c);

/** Frees what hv_rarms_build and the comparisons left in c. */
void hv_rctx_free(struct hv_rctx *c);

/** The arm of (config, workload, metric, side), or NULL. */
const struct hv_arm *hv_rarm_find(const struct hv_rctx *c, size_t config, size_t workload,
                                  const char *metric, enum hv_side side);

/** The configuration whose level of every factor is levels[f], or
 *  SIZE_MAX. */
size_t hv_rconfig_find(const struct hv_rctx *c, const size_t *levels);

/** Summarises x[0..n) as hv_summarize does, dividing by the largest
 *  magnitude first so that no square overflows; a quantity that cannot be
 *  negative gets hv_summary_nonneg. Returns hv_summarize's error. */
enum hv_stat_err hv_rsummarize(const double *x, size_t n, bool nonneg, struct hv_summary *s);

/** Whether metric (measured in unit) cannot be negative: the upload rule
 *  (lib/result.h) refuses a negative value of it. */
bool hv_rnonneg(const char *metric, const char *unit);

/** The summaries (with per-run values and outlier flags) and, in *rows,
 *  the flat rows of the report. Returns NULL when memory runs out. */
json_t *hv_rsummaries(struct hv_rctx *c, json_t **rows);

/** An interval object {"scale","center","lo","hi","rel_half_pct",
 *  "lo_clamped","level"}, or null without one. */
json_t *hv_rinterval_json(const struct hv_summary *s);

/** Sets "usable" and "interval_note" (null when usable, else note) in o:
 *  every report object whose interval is judged carries the pair so. */
void hv_rset_usable(json_t *o, bool usable, const char *note);

/** Sets "usable" (whether s's interval is worth printing) and
 *  "interval_note" (null, or the words to print instead of it:
 *  hv_interval_note against ci_pct) in o. */
void hv_rusable_json(json_t *o, const struct hv_summary *s, double ci_pct);

/** Sets "usable" and "interval_note" in o for a % change's interval
 *  [lo_pct, hi_pct] of n rounds (the smaller side's), as hv_contrast_note
 *  judges it; note (len bytes) gets the words ("" when usable). Returns
 *  whether it is usable. */
bool hv_rusable_change(json_t *o, size_t n, double lo_pct, double hi_pct, char *note, size_t len);

/** The interval of a sentence: "[lo, hi]" (hv_fmt_change_interval) when
 *  usable, else "(note)". Returns buf. */
char *hv_rchange_interval(char *buf, size_t len, bool usable, double lo_pct, double hi_pct,
                          int decimals, const char *note);

/* report_compare.c */

/** The comparisons of every factor level with its default, per workload,
 *  side and primary metric; sets c->cmps and *family. */
json_t *hv_rcompare(struct hv_rctx *c, json_t **family);

/** The two-factor interactions of a full factorial design. */
json_t *hv_rinteractions(struct hv_rctx *c);

/* report_overhead.c */

/** The ratios to the baseline and, in *efficiency, the efficiency per
 *  subsystem and overall, per configuration. */
json_t *hv_roverhead(struct hv_rctx *c, json_t **efficiency);

/* report_advice.c */

/** Per configuration, how its repetitions stopped, judged as the server's
 *  stop rule judges (server/db_rounds.c): hv_ci_reached on the primary
 *  per-target series of summaries (the report's), and for the plan as a
 *  whole ("reached"), beside the server's kept decision ("server"). */
json_t *hv_rrepetitions(struct hv_rctx *c, const json_t *summaries);

/** The recommendations, ranked; *ignore the levels safe to ignore. */
json_t *hv_rrecommend(struct hv_rctx *c, json_t **ignore);

/* report_digest.c */

/** Whether the report of d should leave a digest: d holds the values (no
 *  digest), not runs_all, and a series of more than HV_REPORT_RUNS_LISTED
 *  rounds. */
bool hv_rdigest_wanted(const struct hv_rdata *d);

/** The digest of the report being built in c: the summaries and rows
 *  (new references), the warnings c->warnings gained from first_warning
 *  on (those of the summaries), and c->arms. NULL when memory runs out. */
json_t *hv_rdigest(const struct hv_rctx *c, json_t *summaries, json_t *rows, size_t first_warning);

/** The summaries of c->d's digest (new references; *rows too), their
 *  warnings appended to c->warnings. */
json_t *hv_rdigest_summaries(struct hv_rctx *c, json_t **rows);

/** Builds c->arms from c->d's digest. Returns 0, or -1 when memory runs out
 *  or the digest does not fit the plan. */
int hv_rdigest_arms(struct hv_rctx *c);

/* helpers (report_arms.c) */

/** Sets key to v, or to null when v is not finite. */
void hv_rset_num(json_t *o, const char *key, double v);

/** Appends {"kind", "message"} to c->warnings. */
void hv_rwarn(struct hv_rctx *c, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** "in the guests" or "on the host". */
const char *hv_rside_phrase(enum hv_side s);

/** "guests" or "host". */
const char *hv_rside_name(enum hv_side s);

/** The subject of a sentence: the metric's label, the workload when the
 *  plan has several, and where: "cpu score (cpu) in the guests". */
char *hv_rsubject(const struct hv_rctx *c, const struct hv_arm *a, char *buf, size_t len);

/** The job ids jobs[0..n) as a JSON array, at most max of them. */
json_t *hv_rjobs_json(const int64_t *jobs, size_t n, size_t max);

#endif
