/* roundsim.h — rounds to a verdict, simulated: series of known truth fed
 * through the stop rule of adaptive repetitions (lib/adaptive.h) and the
 * comparison a plan's report states (lib/compare.h), for bench/rounds.c
 * and tests/unit/test_roundsim.c.
 *
 * Model of one seed: a plan of two configurations, the default and one
 * level of a factor, one higher-is-better primary metric on one target.
 * Each round runs each configuration once. A run's value is
 *   100 · e^(mu_c + w_r + sigma·z) · (1 + burst_pct/100 if the run is hit)
 * with mu_default = 0, mu_level = ln(1 + effect_pct/100), z standard
 * normal, sigma = sqrt(ln(1 + cv²)) (log-normal noise of CV cv_pct), w_r a
 * random walk on the log scale (w_0 = 0, each round's step normal with sd
 * drift_pct/100) common to both configurations of round r, and each run
 * hit by a burst with probability burst_share, independently: a fixed
 * factor, not more noise.
 *
 * After each round the stop rule judges the two series as the server does
 * (hv_summarize_scaled, hv_adapt_next with rep_min, rep_max, ci_pct); when
 * it stops, the comparison is the report's (hv_effect of the two log
 * groups, hv_verdict_usable, then hv_family_verdicts over the plan's one
 * comparison; a verdict from an unusable interval is inconclusive), once
 * for every margin asked (the stop rule does not read the margin).
 *
 * Every seed draws from its own generator (tests/unit/sim.h's
 * sim_state(stream, seed)), so the figures are the same whatever the
 * number of threads. Thread safe. */
#ifndef HV_BENCH_ROUNDSIM_H
#define HV_BENCH_ROUNDSIM_H

#include "adaptive.h"
#include "compare.h"
#include "sequential.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The rules a simulated plan runs under: one run gives both arms on the
 *  same seeds. */
enum roundsim_arm {
    /** today's: hv_adapt_next stops on the width; at the stop, the report's
     *  Welch comparison (hv_effect) and Holm (hv_family_verdicts) */
    ROUNDSIM_TODAY = 0,
    /** paired and group-sequential: after each round from rep_min, the
     *  paired comparison (hv_effect_paired) judged at the look's level
     *  (hv_seq_verdicts, spending ROUNDSIM_SPEND); hv_seq_next stops when
     *  it is decided, on the width, or at max. Its stop reads the margin,
     *  so every margin is a plan of its own on the same data. */
    ROUNDSIM_SEQUENTIAL,
};

/** The spending function of the sequential arm (sequential.h). */
#define ROUNDSIM_SPEND HV_SEQ_SPEND

/** "today" or "sequential" (static). */
const char *roundsim_arm_name(enum roundsim_arm arm);

/** The most margins one model judges its stops at. */
#define ROUNDSIM_MARGINS_MAX 4
/** "Never": the rounds to better of a seed whose verdict was not better. */
#define ROUNDSIM_NEVER (-1)

/** What is simulated, and the rule's settings. */
struct roundsim_model {
    double effect_pct;  /**< the level's true % change against the default */
    double cv_pct;      /**< log-normal noise of every run: its CV, % */
    double drift_pct;   /**< sd of the random walk's step per round, % on logs; 0: none */
    double burst_share; /**< chance a run is hit by a burst; 0: none */
    double burst_pct;   /**< a hit run is multiplied by 1 + burst_pct/100 */
    int rep_min, rep_max;
    double ci_pct;                           /**< the stop rule's width */
    size_t n_margins;                        /**< 1..ROUNDSIM_MARGINS_MAX */
    double margin_pct[ROUNDSIM_MARGINS_MAX]; /**< the margins verdicts are read at */
};

/** The fixed rounds at which the coverage of each arm's 95 % interval is
 *  read (roundsim_cover_at; each at most every model's rep_max). */
#define ROUNDSIM_COVER_LOOKS 4
extern const int roundsim_cover_at[ROUNDSIM_COVER_LOOKS];

/** What one seed came to. */
struct roundsim_seed {
    /** Per margin (today's arm: the same stop for every margin): */
    int rounds[ROUNDSIM_MARGINS_MAX];              /**< complete rounds at the stop */
    enum hv_seq_stop stop[ROUNDSIM_MARGINS_MAX];   /**< why it stopped */
    enum hv_verdict verdict[ROUNDSIM_MARGINS_MAX]; /**< the family verdict */
    /** Whether the arm's 95 % interval of the first roundsim_cover_at[k]
     *  rounds, whatever the stop rule, holds the true effect
     *  ln(1 + effect_pct/100): today's Welch interval (hv_effect), the
     *  sequential arm's paired one (hv_effect_paired). */
    bool covered[ROUNDSIM_COVER_LOOKS];
};

/** The figures of many seeds. */
struct roundsim_tally {
    size_t seeds;
    /** At the first margin: */
    size_t precise; /**< seeds stopped by the width */
    size_t decided; /**< seeds stopped by a decided comparison (sequential arm) */
    double mean_rounds;
    int p50, p90; /**< rounds at the stop: median and 90th percentile */
    /** Per margin: seeds of each verdict (indexed by enum hv_verdict). */
    size_t verdicts[ROUNDSIM_MARGINS_MAX][4];
    /** Rounds to better at the first margin, a seed not ending better
     *  counting as never: median and 90th percentile, ROUNDSIM_NEVER when
     *  that share of seeds never got there. */
    int better_p50, better_p90;
    /** The same among the seeds that end better only; ROUNDSIM_NEVER
     *  when none does. */
    int won_p50, won_p90;
    /** Seeds whose interval held the truth at roundsim_cover_at[k]. */
    size_t covered[ROUNDSIM_COVER_LOOKS];
};

/** One experiment of bench/rounds.c: a model and its seeds' stream. */
struct roundsim_experiment {
    const char *name;
    uint64_t stream; /**< the seeds' generator stream (tests/unit/sim.h) */
    struct roundsim_model model;
};

/** The experiments bench/rounds.c measures and tests/unit/test_roundsim.c
 *  guards, roundsim_experiments[0..roundsim_n_experiments): a +5 % effect
 *  and no effect, each with noise only (CV 3 %) and with drift (1 % a
 *  round) and bursts (one run in ten, at random, ×1.2); the stop rule at
 *  min 3, max 50, ci_pct HV_CI_PCT_DEFAULT; verdicts at the plan's default
 *  margin, and at 0.1 % too on null data. */
extern const struct roundsim_experiment roundsim_experiments[];
extern const size_t roundsim_n_experiments;

/** The seeds whose verdict is wrong, from the counts v of each verdict
 *  (indexed by enum hv_verdict): better or worse when m has no effect,
 *  the opposite direction's verdict when it has one. */
size_t roundsim_wrong(const struct roundsim_model *m, const size_t *v);

/** Runs seed `seed` of experiment `stream` of model m under `arm` into
 *  *out; d is the sequential arm's design (rep_min..rep_max, one
 *  comparison; NULL for today's). Returns 0, or -1 when memory ran out or
 *  a model figure is out of range. */
int roundsim_seed(const struct roundsim_model *m, enum roundsim_arm arm,
                  const struct hv_seq_design *d, uint64_t stream, uint64_t seed,
                  struct roundsim_seed *out);

/** Runs seeds 0..seeds-1 of experiment `stream` under `arm` into
 *  out[0..seeds) with `threads` threads (>= 1). Returns 0, or -1 when a
 *  seed failed or a thread could not start. */
int roundsim_run(const struct roundsim_model *m, enum roundsim_arm arm, uint64_t stream,
                 size_t seeds, int threads, struct roundsim_seed *out);

/** Tallies s[0..n) (n >= 1). Allocates scratch; returns 0 or -1. */
int roundsim_tally(const struct roundsim_model *m, const struct roundsim_seed *s, size_t n,
                   struct roundsim_tally *t);

/** The exact (Clopper–Pearson) one-sided upper 95 % bound of a rate from k
 *  events in n trials (n >= 1), as a share in [0, 1]. */
double roundsim_upper95(size_t k, size_t n);

#endif
