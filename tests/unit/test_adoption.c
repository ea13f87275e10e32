/* test_adoption.c — the verdict on an adopted recommendation: the
 * difference in differences by hand on small data, each verdict on data
 * of known truth, drift shared with the controls taken out, lower-is-
 * better mirrored, what is pending and why, refusals, and how often each
 * verdict comes on simulated fleets (1,000 seeds). */
#include "adoption.h"

#include "check.h"
#include "sim.h"

#include <math.h>
#include <string.h>

#define SEEDS  1000
#define ROUNDS 5
#define HOSTS  3

/* A fleet of HOSTS adopted hosts and HOSTS controls, ROUNDS values each
 * side: base 1000 × host factor, CV cv; the adopted hosts' after values
 * × (1 + effect), everyone's after values × (1 + drift). */
struct fleet {
    double v[2 * HOSTS][2][ROUNDS];
    struct hv_adoption_host h[2 * HOSTS];
};

static void simulate(struct fleet *f, uint64_t *st, double effect, double drift, double cv)
{
    for (int i = 0; i < 2 * HOSTS; i++) {
        double base = 1000.0 * (1.0 + 0.1 * i);
        sim_sample(st, base, cv, f->v[i][0], ROUNDS);
        sim_sample(st, base * (1.0 + drift) * (i < HOSTS ? 1.0 + effect : 1.0), cv, f->v[i][1],
                   ROUNDS);
        f->h[i] = (struct hv_adoption_host){f->v[i][0], ROUNDS, f->v[i][1], ROUNDS};
    }
}

static struct hv_adoption_input input(const struct fleet *f, double plo, double phi)
{
    return (struct hv_adoption_input){.adopted = f->h,
                                      .n_adopted = HOSTS,
                                      .controls = f->h + HOSTS,
                                      .n_controls = HOSTS,
                                      .higher_is_better = true,
                                      .predicted_lo = plo,
                                      .predicted_hi = phi,
                                      .margin_pct = 1.0};
}

/* Two adopted hosts, two controls, values chosen so the answer is known:
 * adopted changes ln(1.2) and ln(1.3)... */
static void test_by_hand(void)
{
    const double b1[] = {100, 100}, a1[] = {120, 120};
    const double b2[] = {200, 200}, a2[] = {260, 260};
    const double c1b[] = {50, 50}, c1a[] = {55, 55};
    const double c2b[] = {80, 80}, c2a[] = {80, 80};
    struct hv_adoption_host ad[] = {{b1, 2, a1, 2}, {b2, 2, a2, 2}};
    struct hv_adoption_host co[] = {{c1b, 2, c1a, 2}, {c2b, 2, c2a, 2}};
    struct hv_adoption_input in = {ad, 2, co, 2, true, 10.0, 30.0, 1.0};
    struct hv_adoption_result r;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
    double want = (log(1.2) + log(1.3)) / 2 - (log(1.1) + log(1.0)) / 2;
    CHECK_NEAR(r.gain_pct, 100.0 * expm1(want), 1e-9);
    CHECK(r.controlled && r.controls == 2 && r.hosts == 2);
    /* se² = var(d_h)/2 + var(d_c)/2 with the sample variances of the two
     * changes each side; df by Welch–Satterthwaite. */
    double va = pow(log(1.3) - log(1.2), 2) / 2, vc = pow(log(1.1), 2) / 2;
    double se = sqrt(va / 2 + vc / 2);
    double df = pow(va / 2 + vc / 2, 2) / (pow(va / 2, 2) + pow(vc / 2, 2));
    double t = hv_t_quantile(0.975, df);
    CHECK_NEAR(r.lo_pct, 100.0 * expm1(want - t * se), 1e-6);
    CHECK_NEAR(r.hi_pct, 100.0 * expm1(want + t * se), 1e-6);

    /* Without controls: the adopted hosts' changes alone. */
    in.n_controls = 0;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
    CHECK(!r.controlled && r.controls == 0);
    CHECK_NEAR(r.gain_pct, 100.0 * expm1((log(1.2) + log(1.3)) / 2), 1e-9);

    /* One control is no control: its change has no spread to weigh. */
    in.n_controls = 1;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
    CHECK(!r.controlled);
}

/* Each verdict on noise-free-enough data of known truth (CV 1 %). */
static void test_verdicts(void)
{
    struct fleet f;
    struct hv_adoption_result r;
    uint64_t st = sim_state(1, 1);
    struct {
        double effect, drift, plo, phi;
        enum hv_adoption_state want;
    } cases[] = {
        {0.20, 0.0, 10.0, 30.0, HV_ADOPTION_DELIVERED},
        {0.40, 0.0, 10.0, 30.0, HV_ADOPTION_DELIVERED}, /* more than predicted */
        {0.05, 0.0, 15.0, 30.0, HV_ADOPTION_PARTIAL},
        {0.00, 0.0, 15.0, 30.0, HV_ADOPTION_NONE},
        {-0.10, 0.0, 15.0, 30.0, HV_ADOPTION_REGRESSED},
        /* A drift of +20 % on every host, no effect: none, not delivered. */
        {0.00, 0.20, 15.0, 30.0, HV_ADOPTION_NONE},
        {0.20, -0.15, 10.0, 30.0, HV_ADOPTION_DELIVERED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        simulate(&f, &st, cases[i].effect, cases[i].drift, 0.01);
        struct hv_adoption_input in = input(&f, cases[i].plo, cases[i].phi);
        CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
        CHECK_MSG(r.state == cases[i].want, "effect %+.2f drift %+.2f: %s [%+.2f, %+.2f], want %s",
                  cases[i].effect, cases[i].drift, hv_adoption_state_name(r.state), r.lo_pct,
                  r.hi_pct, hv_adoption_state_name(cases[i].want));
        CHECK(r.controlled && r.hosts == HOSTS && r.controls == HOSTS);
    }
    /* The same drift without controls is taken for a gain: why controls. */
    simulate(&f, &st, 0.0, 0.20, 0.01);
    struct hv_adoption_input in = input(&f, 15.0, 30.0);
    in.n_controls = 0;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
    CHECK_MSG(r.state == HV_ADOPTION_DELIVERED && r.gain_pct > 15.0, "before/after alone: %s %+.1f",
              hv_adoption_state_name(r.state), r.gain_pct);
}

/* Lower is better: a 20 % lower latency is a gain of 20 % (the report's
 * gain_pct: the % change negated), and its interval mirrored. */
static void test_lower_is_better(void)
{
    struct fleet f;
    uint64_t st = sim_state(2, 1);
    simulate(&f, &st, -0.20, 0.0, 0.01);
    struct hv_adoption_input in = input(&f, 10.0, 30.0);
    struct hv_adoption_result up, down;
    CHECK(hv_adoption_verdict(&in, &up) == HV_STAT_OK);
    in.higher_is_better = false;
    CHECK(hv_adoption_verdict(&in, &down) == HV_STAT_OK);
    CHECK(up.state == HV_ADOPTION_REGRESSED);
    CHECK(down.state == HV_ADOPTION_DELIVERED);
    CHECK_NEAR(down.gain_pct, -up.gain_pct, 1e-9);
    CHECK_NEAR(down.lo_pct, -up.hi_pct, 1e-9);
    CHECK_NEAR(down.hi_pct, -up.lo_pct, 1e-9);
}

/* Pending, and why; one adopted host compared with itself. */
static void test_pending(void)
{
    struct hv_adoption_result r;
    const double b[] = {100, 101, 99}, a[] = {130, 131, 129}, one[] = {130};
    struct hv_adoption_host none[] = {{b, 3, NULL, 0}};
    struct hv_adoption_input in = {none, 1, NULL, 0, true, 10.0, 30.0, 1.0};
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
    CHECK(r.state == HV_ADOPTION_PENDING && !r.estimated && r.hosts == 0);
    CHECK(strstr(r.why, "no adopted host has values both before and after") != NULL);

    struct hv_adoption_host thin[] = {{b, 3, one, 1}};
    in.adopted = thin;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
    CHECK(r.state == HV_ADOPTION_PENDING && !r.estimated && r.hosts == 1);
    CHECK(strstr(r.why, "at least 2 values before and 2 after") != NULL);

    struct hv_adoption_host single[] = {{b, 3, a, 3}};
    in.adopted = single;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
    CHECK(r.state == HV_ADOPTION_DELIVERED && r.hosts == 1 && !r.controlled);
    CHECK_NEAR(r.gain_pct, 100.0 * expm1(log(130.0 * 131 * 129) / 3 - log(100.0 * 101 * 99) / 3),
               1e-9);

    /* Noisy data (CV 20 %): too wide to tell, and the words say so. */
    struct fleet f;
    uint64_t st = sim_state(3, 1);
    simulate(&f, &st, 0.0, 0.0, 0.20);
    in = input(&f, 10.0, 30.0);
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_OK);
    CHECK_MSG(r.state == HV_ADOPTION_PENDING && strstr(r.why, "more rounds") != NULL, "%s: %s",
              hv_adoption_state_name(r.state), r.why);
}

static void test_refusals(void)
{
    struct hv_adoption_result r;
    const double b[] = {100, 101}, bad[] = {100, -1};
    struct hv_adoption_host h[] = {{b, 2, bad, 2}};
    struct hv_adoption_input in = {h, 1, NULL, 0, true, 10.0, 30.0, 1.0};
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_NOT_POSITIVE);
    in.predicted_lo = 40.0;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_BAD_ARG);
    in.predicted_lo = NAN;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_BAD_ARG);
    in.predicted_lo = 10.0;
    in.margin_pct = -1.0;
    CHECK(hv_adoption_verdict(&in, &r) == HV_STAT_BAD_ARG);
    CHECK(hv_adoption_verdict(NULL, &r) == HV_STAT_BAD_ARG);
    CHECK_STR(hv_adoption_state_name(HV_ADOPTION_NONE), "none");
    CHECK_STR(hv_adoption_state_name(HV_ADOPTION_PENDING), "pending");
}

/* How often each verdict comes, over SEEDS simulated fleets (CV 3 %,
 * 3 + 3 hosts, 5 values a side, a fleet-wide drift of N(0, 5 %)): a true
 * effect inside the predicted interval is rarely called none or
 * regressed; no effect is rarely called delivered; margin 1 %. */
static void sim_rates(void)
{
    struct fleet f;
    size_t called[2][5] = {{0}};
    const double effects[2] = {0.20, 0.0};
    for (int k = 0; k < 2; k++) {
        for (uint64_t s = 0; s < SEEDS; s++) {
            uint64_t st = sim_state(10 + (uint64_t)k, s);
            double drift = 0.05 * sim_normal(&st);
            simulate(&f, &st, effects[k], drift, 0.03);
            struct hv_adoption_input in = input(&f, 10.0, 30.0);
            struct hv_adoption_result r;
            if (hv_adoption_verdict(&in, &r) == HV_STAT_OK)
                called[k][r.state]++;
        }
    }
    static const char *const what[2] = {"+20 % (predicted [+10, +30])", "no effect"};
    for (int k = 0; k < 2; k++)
        CHECK_SAY(1,
                  "%s: delivered %.1f %%, partial %.1f %%, none %.1f %%, regressed %.1f %%, "
                  "pending %.1f %%",
                  what[k], sim_pct(called[k][HV_ADOPTION_DELIVERED], SEEDS),
                  sim_pct(called[k][HV_ADOPTION_PARTIAL], SEEDS),
                  sim_pct(called[k][HV_ADOPTION_NONE], SEEDS),
                  sim_pct(called[k][HV_ADOPTION_REGRESSED], SEEDS),
                  sim_pct(called[k][HV_ADOPTION_PENDING], SEEDS));
    /* A real +20 %: delivered in at least 90 %, never regressed beyond
     * the one-sided error rate's reach (2.5 %). */
    CHECK(sim_pct(called[0][HV_ADOPTION_DELIVERED], SEEDS) >= 90.0);
    CHECK(sim_pct(called[0][HV_ADOPTION_NONE] + called[0][HV_ADOPTION_REGRESSED], SEEDS) <= 2.5);
    /* No effect: a gain (delivered or partial) claimed at most at the
     * one-sided rate of a 95 % interval, 2.5 %, plus sampling slack. */
    CHECK(sim_pct(called[1][HV_ADOPTION_DELIVERED] + called[1][HV_ADOPTION_PARTIAL], SEEDS) <= 4.0);
    CHECK(sim_pct(called[1][HV_ADOPTION_REGRESSED], SEEDS) <= 4.0);
}

int main(void)
{
    test_by_hand();
    test_verdicts();
    test_lower_is_better();
    test_pending();
    test_refusals();
    sim_rates();
    return check_summary("test_adoption");
}
