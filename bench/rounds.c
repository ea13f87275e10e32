/* rounds.c — rounds to a verdict under today's stop rule and comparison
 * and under the paired group-sequential rule (both arms on the same seeds),
 * for bench/rounds.sh: simulated plans of two configurations
 * (bench/roundsim.h) run through lib/adaptive.c and lib/compare.c, the
 * four experiments of roundsim_experiments, `seeds` seeds each:
 *   - a +5 % effect, noise only (CV 3 %), and with drift and bursts
 *     (a 1 % random walk per round common to both configurations; one run
 *     in ten, at random, ×1.2): rounds at the stop, rounds to better, the
 *     verdicts at the plan's default margin;
 *   - no effect, the same two ways: the false better/worse rate at margins
 *     0.1 % and 1 %, with its Clopper–Pearson one-sided upper 95 % bound;
 *   - every experiment: how often each rule's 95 % interval holds the true
 *     effect at roundsim_cover_at's rounds, whatever the stop.
 * The stop rule: min 3, max 50, ci_pct 2.
 *
 *   build/bench/rounds [--seeds N (20000)] [--threads T (2)] [--json]
 *
 * Prints a Markdown table, or with --json one object (the figures
 * bench/rounds.sh records). The figures depend on the seeds only, never on
 * the threads. */
#include "bench/roundsim.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *rounds_json(int r)
{
    return r == ROUNDSIM_NEVER ? json_null() : json_integer(r);
}

static json_t *experiment_json(const struct roundsim_experiment *e, enum roundsim_arm arm,
                               const struct roundsim_tally *t)
{
    const struct roundsim_model *m = &e->model;
    json_t *margins = json_array();
    for (size_t i = 0; i < m->n_margins; i++) {
        const size_t *v = t->verdicts[i];
        size_t wrong = roundsim_wrong(m, v);
        json_array_append_new(
            margins,
            json_pack("{s:f,s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "margin_pct", m->margin_pct[i], "better",
                      (json_int_t)v[HV_VERDICT_BETTER], "worse", (json_int_t)v[HV_VERDICT_WORSE],
                      "no_effect", (json_int_t)v[HV_VERDICT_NO_EFFECT], "inconclusive",
                      (json_int_t)v[HV_VERDICT_INCONCLUSIVE], "false", (json_int_t)wrong,
                      "false_pct", 100.0 * (double)wrong / (double)t->seeds, "false_upper95_pct",
                      100.0 * roundsim_upper95(wrong, t->seeds)));
    }
    json_t *coverage = json_array();
    for (size_t k = 0; k < ROUNDSIM_COVER_LOOKS; k++)
        json_array_append_new(coverage,
                              json_pack("{s:i,s:f}", "rounds", roundsim_cover_at[k], "covered_pct",
                                        100.0 * (double)t->covered[k] / (double)t->seeds));
    return json_pack("{s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:f,s:i,s:i,s:o,s:o,s:o,s:o,s:o,s:o}",
                     "name", e->name, "rule", roundsim_arm_name(arm), "effect_pct", m->effect_pct,
                     "cv_pct", m->cv_pct, "drift_pct", m->drift_pct, "burst_share", m->burst_share,
                     "burst_pct", m->burst_pct, "precise", (json_int_t)t->precise, "decided",
                     (json_int_t)t->decided, "mean_rounds", t->mean_rounds, "p50", t->p50, "p90",
                     t->p90, "better_p50", rounds_json(t->better_p50), "better_p90",
                     rounds_json(t->better_p90), "won_p50", rounds_json(t->won_p50), "won_p90",
                     rounds_json(t->won_p90), "margins", margins, "coverage", coverage);
}

/* " P50 / P90 |", "never" for ROUNDSIM_NEVER. */
static void print_rounds(int p50, int p90)
{
    char a[16] = "never", b[16] = "never";
    if (p50 != ROUNDSIM_NEVER)
        snprintf(a, sizeof a, "%d", p50);
    if (p90 != ROUNDSIM_NEVER)
        snprintf(b, sizeof b, "%d", p90);
    printf(" %s / %s |", a, b);
}

static void print_row(const struct roundsim_experiment *e, enum roundsim_arm arm,
                      const struct roundsim_tally *t)
{
    const struct roundsim_model *m = &e->model;
    double n = (double)t->seeds;
    for (size_t i = 0; i < m->n_margins; i++) {
        const size_t *v = t->verdicts[i];
        size_t wrong = roundsim_wrong(m, v);
        printf("| %s | %s | %g %% | %.2f |", e->name, roundsim_arm_name(arm), m->margin_pct[i],
               t->mean_rounds);
        print_rounds(t->p50, t->p90);
        print_rounds(t->better_p50, t->better_p90);
        print_rounds(t->won_p50, t->won_p90);
        printf(" %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.3g %% (≤ %.3g %%) | %.1f %% | %.1f %% |",
               100.0 * (double)v[HV_VERDICT_BETTER] / n, 100.0 * (double)v[HV_VERDICT_WORSE] / n,
               100.0 * (double)v[HV_VERDICT_NO_EFFECT] / n,
               100.0 * (double)v[HV_VERDICT_INCONCLUSIVE] / n, 100.0 * (double)wrong / n,
               100.0 * roundsim_upper95(wrong, t->seeds), 100.0 * (double)t->precise / n,
               100.0 * (double)t->decided / n);
        for (size_t k = 0; k < ROUNDSIM_COVER_LOOKS; k++)
            printf("%s%.1f", k ? " / " : " ", 100.0 * (double)t->covered[k] / n);
        printf(" %% |\n");
    }
}

int main(int argc, char **argv)
{
    long seeds = 20000, threads = 2;
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            seeds = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else
            seeds = -1;
    }
    if (seeds < 1 || threads < 1 || threads > 256) {
        fprintf(stderr, "usage: rounds [--seeds N] [--threads T (1..256)] [--json]\n");
        return 2;
    }
    struct roundsim_seed *s = calloc((size_t)seeds, sizeof *s);
    json_t *list = json_array();
    if (s == NULL || list == NULL) {
        fprintf(stderr, "rounds: out of memory\n");
        return 1;
    }
    if (!as_json) {
        fputs(
            "| data | rule | margin | mean rounds | rounds p50 / p90 | to better p50 / p90 | the "
            "better ones' p50 / p90 | better | worse | no_effect | inconclusive | wrong (upper 95 "
            "%) | precise | decided | 95 % interval holds the truth at",
            stdout);
        for (size_t k = 0; k < ROUNDSIM_COVER_LOOKS; k++)
            printf("%s%d", k ? " / " : " ", roundsim_cover_at[k]);
        printf(" rounds |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    }
    for (size_t k = 0; k < 2 * roundsim_n_experiments; k++) {
        const struct roundsim_experiment *e = &roundsim_experiments[k / 2];
        enum roundsim_arm arm = k % 2 ? ROUNDSIM_SEQUENTIAL : ROUNDSIM_TODAY;
        struct roundsim_tally t;
        if (roundsim_run(&e->model, arm, e->stream, (size_t)seeds, (int)threads, s) != 0 ||
            roundsim_tally(&e->model, s, (size_t)seeds, &t) != 0) {
            fprintf(stderr, "rounds: %s: the simulation failed\n", e->name);
            return 1;
        }
        if (as_json)
            json_array_append_new(list, experiment_json(e, arm, &t));
        else
            print_row(e, arm, &t);
    }
    if (as_json) {
        json_t *doc = json_pack("{s:I,s:i,s:i,s:f,s:o}", "seeds", (json_int_t)seeds, "rep_min",
                                roundsim_experiments[0].model.rep_min, "rep_max",
                                roundsim_experiments[0].model.rep_max, "ci_pct",
                                roundsim_experiments[0].model.ci_pct, "experiments", list);
        json_dumpf(doc, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(doc);
    } else {
        json_decref(list);
    }
    free(s);
    return 0;
}
