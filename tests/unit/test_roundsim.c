/* test_roundsim.c — the rounds to a verdict of today's stop rule and
 * comparison and of the paired group-sequential rule (bench/roundsim.h,
 * measured in full by bench/rounds.sh): the experiments of bench/rounds.c
 * at 200 seeds each under both rules, whose figures must stay exactly
 * what they are. A change here means a stop rule, a comparison or the
 * verdict read at the stop changed: measure it with bench/rounds.sh, and
 * update docs/statistics.md ("Rounds to a verdict") and these figures
 * together. On the same seeds the paired rule must keep the issue's
 * goals: with drift and bursts at most half today's median rounds to
 * better, with noise only at most 1.3 times, false better/worse on null
 * data at most 5 % at every margin. Also: the figures do not depend on
 * the threads, every stop obeys the rule's bounds, and the
 * Clopper–Pearson bound against an exact binomial sum (Python's
 * math.comb). */
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

/* In the order of roundsim_experiments, today's rule and the paired one. */
#define NEVER ROUNDSIM_NEVER
static const struct expect expected_today[] = {
    /* +5 %, noise only */
    {200, 2648, 13, 18, 14, NEVER, 13, 18, {{25, 175, 0, 0}}},
    /* +5 %, drift and bursts */
    {80, 9100, 50, 50, 50, NEVER, 50, 50, {{36, 164, 0, 0}}},
    /* null, noise only */
    {200, 2587, 13, 17, NEVER, NEVER, 10, 17, {{180, 6, 14, 0}, {198, 2, 0, 0}}},
    /* null, drift and bursts */
    {83, 8868, 50, 50, NEVER, NEVER, NEVER, NEVER, {{198, 0, 2, 0}, {200, 0, 0, 0}}},
};
static const struct expect expected_paired[] = {
    /* +5 %, noise only */
    {2, 3095, 14, 24, 14, 25, 14, 24, {{2, 198, 0, 0}}},
    /* +5 %, drift and bursts */
    {0, 4404, 20, 39, 20, 39, 20, 35, {{7, 193, 0, 0}}},
    /* null, noise only */
    {161, 7682, 41, 50, NEVER, NEVER, 11, 26, {{191, 5, 4, 0}, {198, 2, 0, 0}}},
    /* null, drift and bursts */
    {54, 9343, 50, 50, NEVER, NEVER, 21, 29, {{194, 3, 3, 0}, {199, 0, 1, 0}}},
};
static const struct expect *const expected[2] = {
    [ROUNDSIM_TODAY] = expected_today,
    [ROUNDSIM_SEQUENTIAL] = expected_paired,
};
/* Seeds whose interval held the truth at roundsim_cover_at's rounds. */
static const size_t expected_covered[2][4][ROUNDSIM_COVER_LOOKS] = {
    [ROUNDSIM_TODAY] = {{193, 196, 194, 190},
                        {195, 190, 193, 193},
                        {187, 184, 187, 188},
                        {196, 195, 191, 197}},
    [ROUNDSIM_SEQUENTIAL] = {{187, 191, 189, 189},
                             {186, 191, 192, 193},
                             {189, 184, 187, 189},
                             {188, 193, 189, 195}},
};

static void test_experiment(size_t k, enum roundsim_arm arm, struct roundsim_seed *s,
                            struct roundsim_tally *t)
{
    const struct roundsim_experiment *e = &roundsim_experiments[k];
    const struct roundsim_model *m = &e->model;
    const struct expect *x = &expected[arm][k];
    CHECK(roundsim_run(m, arm, e->stream, SEEDS, 1, s) == 0);
    size_t sum = 0;
    for (size_t i = 0; i < SEEDS; i++) {
        sum += (size_t)s[i].rounds[0];
        CHECK_MSG(s[i].rounds[0] >= m->rep_min && s[i].rounds[0] <= m->rep_max,
                  "seed %zu: %d rounds", i, s[i].rounds[0]);
        CHECK(s[i].stop[0] == HV_SEQ_PRECISE || s[i].stop[0] == HV_SEQ_DECIDED ||
              (s[i].stop[0] == HV_SEQ_MAX && s[i].rounds[0] == m->rep_max));
        /* Today's rule never stops on a decision: it does not look. */
        CHECK(arm == ROUNDSIM_SEQUENTIAL || s[i].stop[0] != HV_SEQ_DECIDED);
    }
    CHECK(roundsim_tally(m, s, SEEDS, t) == 0);
    printf("{%zu, %zu, %d, %d, %d, %d, %d, %d, {", t->precise, sum, t->p50, t->p90, t->better_p50,
           t->better_p90, t->won_p50, t->won_p90);
    for (size_t j = 0; j < m->n_margins; j++)
        printf("%s{%zu, %zu, %zu, %zu}", j ? ", " : "", t->verdicts[j][0], t->verdicts[j][1],
               t->verdicts[j][2], t->verdicts[j][3]);
    printf("}}, /* %s, %s; covered {", e->name, roundsim_arm_name(arm));
    for (size_t j = 0; j < ROUNDSIM_COVER_LOOKS; j++)
        printf("%s%zu", j ? ", " : "", t->covered[j]);
    printf("} */\n");
    CHECK_MSG(t->precise == x->precise && sum == x->rounds_sum, "%s", e->name);
    CHECK_MSG(t->p50 == x->p50 && t->p90 == x->p90, "%s", e->name);
    CHECK_MSG(t->better_p50 == x->better_p50 && t->better_p90 == x->better_p90, "%s", e->name);
    CHECK_MSG(t->won_p50 == x->won_p50 && t->won_p90 == x->won_p90, "%s", e->name);
    for (size_t j = 0; j < m->n_margins; j++)
        CHECK_MSG(memcmp(t->verdicts[j], x->verdicts[j], sizeof x->verdicts[j]) == 0,
                  "%s, margin %g %%", e->name, m->margin_pct[j]);
    CHECK_MSG(memcmp(t->covered, expected_covered[arm][k], sizeof t->covered) == 0, "%s", e->name);

    /* Two threads share the seeds out: every seed comes to the same. */
    struct roundsim_seed *two = calloc(SEEDS, sizeof *two);
    CHECK(two != NULL && roundsim_run(m, arm, e->stream, SEEDS, 2, two) == 0);
    CHECK(two != NULL && memcmp(s, two, SEEDS * sizeof *s) == 0);
    free(two);
}

/* The goals, on the same seeds under both rules. */
static void test_goals(const struct roundsim_tally t[2][4])
{
    const struct roundsim_tally *today = t[ROUNDSIM_TODAY], *paired = t[ROUNDSIM_SEQUENTIAL];
    for (size_t k = 0; k < roundsim_n_experiments; k++) {
        const struct roundsim_model *m = &roundsim_experiments[k].model;
        const char *name = roundsim_experiments[k].name;
        if (m->effect_pct != 0.0) {
            /* Rounds to better: at most half today's with drift and
             * bursts, at most 1.3 times with noise only. */
            int mine = paired[k].better_p50, theirs = today[k].better_p50;
            double goal = m->drift_pct > 0.0 ? 0.5 : 1.3;
            CHECK_MSG(mine != NEVER && theirs != NEVER && mine <= goal * theirs,
                      "%s: %d rounds against today's %d", name, mine, theirs);
        }
        for (size_t j = 0; j < m->n_margins; j++) {
            size_t wrong = roundsim_wrong(m, paired[k].verdicts[j]);
            CHECK_MSG(20 * wrong <= SEEDS, "%s, margin %g %%: %zu wrong", name, m->margin_pct[j],
                      wrong);
        }
        /* The paired interval holds the truth about as often as it says
         * (2.6 binomial sds of 95 % at 200 seeds either side). */
        for (size_t j = 0; j < ROUNDSIM_COVER_LOOKS; j++)
            CHECK_MSG(paired[k].covered[j] >= 182 && paired[k].covered[j] <= 198,
                      "%s at %d rounds: %zu covered", name, roundsim_cover_at[j],
                      paired[k].covered[j]);
    }
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
    CHECK(roundsim_n_experiments == sizeof expected_today / sizeof expected_today[0]);
    CHECK(roundsim_n_experiments == sizeof expected_paired / sizeof expected_paired[0]);
    struct roundsim_seed *s = calloc(SEEDS, sizeof *s);
    static struct roundsim_tally t[2][4];
    CHECK(s != NULL);
    for (int arm = ROUNDSIM_TODAY; s != NULL && arm <= ROUNDSIM_SEQUENTIAL; arm++)
        for (size_t k = 0; k < roundsim_n_experiments; k++)
            test_experiment(k, (enum roundsim_arm)arm, s, &t[arm][k]);
    free(s);
    if (s != NULL)
        test_goals(t);
    test_upper95();
    return check_summary("roundsim");
}
