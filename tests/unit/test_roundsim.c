/* test_roundsim.c — the rounds to a verdict of today's stop rule and
 * comparison (bench/roundsim.h, measured in full by bench/rounds.sh):
 * the experiments of bench/rounds.c at 200 seeds each, whose figures must
 * stay exactly what they are. A change here means the stop rule, the
 * comparison or the verdict read at the stop changed: measure it with
 * bench/rounds.sh, and update docs/statistics.md ("Rounds to a verdict")
 * and these figures together. Also: the figures do not depend on the
 * threads, every stop obeys the rule's bounds, and the Clopper–Pearson
 * bound against an exact binomial sum (Python's math.comb). */
#include "../../bench/roundsim.c"

#include "check.h"

#include <stdlib.h>
#include <string.h>

#define SEEDS 200

/* The figures of one experiment at SEEDS seeds. */
struct expect {
    size_t precise, rounds_sum;
    int p50, p90, better_p50, better_p90, won_p50, won_p90;
    size_t verdicts[2][4]; /* per margin: inconclusive, better, worse, no_effect */
};

/* In the order of roundsim_experiments. */
#define NEVER ROUNDSIM_NEVER
static const struct expect expected[] = {
    /* +5 %, noise only */
    {200, 2648, 13, 18, 14, NEVER, 13, 18, {{25, 175, 0, 0}}},
    /* +5 %, drift and bursts */
    {80, 9100, 50, 50, 50, NEVER, 50, 50, {{36, 164, 0, 0}}},
    /* null, noise only */
    {200, 2587, 13, 17, NEVER, NEVER, 10, 17, {{180, 6, 14, 0}, {198, 2, 0, 0}}},
    /* null, drift and bursts */
    {83, 8868, 50, 50, NEVER, NEVER, NEVER, NEVER, {{198, 0, 2, 0}, {200, 0, 0, 0}}},
};

static void test_experiment(size_t k, struct roundsim_seed *s)
{
    const struct roundsim_experiment *e = &roundsim_experiments[k];
    const struct roundsim_model *m = &e->model;
    const struct expect *x = &expected[k];
    CHECK(roundsim_run(m, ROUNDSIM_TODAY, e->stream, SEEDS, 1, s) == 0);
    size_t sum = 0;
    for (size_t i = 0; i < SEEDS; i++) {
        sum += (size_t)s[i].rounds[0];
        CHECK_MSG(s[i].rounds[0] >= m->rep_min && s[i].rounds[0] <= m->rep_max,
                  "seed %zu: %d rounds", i, s[i].rounds[0]);
        CHECK(s[i].stop[0] == HV_SEQ_PRECISE ||
              (s[i].stop[0] == HV_SEQ_MAX && s[i].rounds[0] == m->rep_max));
    }
    struct roundsim_tally t;
    CHECK(roundsim_tally(m, s, SEEDS, &t) == 0);
    printf("{%zu, %zu, %d, %d, %d, %d, %d, %d, {", t.precise, sum, t.p50, t.p90, t.better_p50,
           t.better_p90, t.won_p50, t.won_p90);
    for (size_t j = 0; j < m->n_margins; j++)
        printf("%s{%zu, %zu, %zu, %zu}", j ? ", " : "", t.verdicts[j][0], t.verdicts[j][1],
               t.verdicts[j][2], t.verdicts[j][3]);
    printf("}}, /* %s */\n", e->name);
    CHECK_MSG(t.precise == x->precise && sum == x->rounds_sum, "%s", e->name);
    CHECK_MSG(t.p50 == x->p50 && t.p90 == x->p90, "%s", e->name);
    CHECK_MSG(t.better_p50 == x->better_p50 && t.better_p90 == x->better_p90, "%s", e->name);
    CHECK_MSG(t.won_p50 == x->won_p50 && t.won_p90 == x->won_p90, "%s", e->name);
    for (size_t j = 0; j < m->n_margins; j++)
        CHECK_MSG(memcmp(t.verdicts[j], x->verdicts[j], sizeof x->verdicts[j]) == 0,
                  "%s, margin %g %%", e->name, m->margin_pct[j]);

    /* Two threads share the seeds out: every seed comes to the same. */
    struct roundsim_seed *two = calloc(SEEDS, sizeof *two);
    CHECK(two != NULL && roundsim_run(m, ROUNDSIM_TODAY, e->stream, SEEDS, 2, two) == 0);
    CHECK(two != NULL && memcmp(s, two, SEEDS * sizeof *s) == 0);
    free(two);
}

static void test_upper95(void)
{
    /* sum_{i <= k} C(n, i) p^i (1 - p)^(n - i) = 0.05, solved in Python. */
    CHECK_NEAR(roundsim_upper95(5, 100), 0.10225337764327452, 1e-9);
    CHECK_NEAR(roundsim_upper95(13, 200), 0.10135703959723757, 1e-9);
    CHECK_NEAR(roundsim_upper95(0, 2000), 0.0014967448951883, 1e-9); /* 1 - 0.05^(1/n) */
    CHECK(roundsim_upper95(7, 7) == 1.0);
}

int main(void)
{
    CHECK(roundsim_n_experiments == sizeof expected / sizeof expected[0]);
    struct roundsim_seed *s = calloc(SEEDS, sizeof *s);
    CHECK(s != NULL);
    for (size_t k = 0; s != NULL && k < roundsim_n_experiments; k++)
        test_experiment(k, s);
    free(s);
    test_upper95();
    return check_summary("roundsim");
}
