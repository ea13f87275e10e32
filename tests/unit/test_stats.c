/* test_stats.c — summary statistics and t quantiles against values
 * computed independently (R: qt(0.975, df); mean/sd by hand). */
#include "stats.h"

#include "check.h"

int main(void)
{
    /* Student t quantiles, as tabulated. */
    CHECK_NEAR(hv_t_quantile(0.975, 1), 12.7062047, 1e-6);
    CHECK_NEAR(hv_t_quantile(0.975, 2), 4.30265273, 1e-7);
    CHECK_NEAR(hv_t_quantile(0.975, 9), 2.26215716, 1e-7);
    CHECK_NEAR(hv_t_quantile(0.975, 1000), 1.96233908, 1e-7);

    /* 3 observations: mean 1020, sd 10, half-width 4.30265 * 10 / sqrt(3). */
    double x[] = {1010, 1020, 1030};
    struct hv_summary s;
    hv_summarize(x, 3, &s);
    CHECK(s.n == 3);
    CHECK_NEAR(s.mean, 1020.0, 1e-12);
    CHECK_NEAR(s.sd, 10.0, 1e-12);
    CHECK(s.has_ci);
    CHECK_NEAR(s.ci_low, 1020.0 - 24.84138, 1e-4);
    CHECK_NEAR(s.ci_high, 1020.0 + 24.84138, 1e-4);
    CHECK_NEAR(s.half_pct, 2.4354291, 1e-6);

    /* Welford stays exact where the naive sum of squares would not. */
    double big[] = {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
    hv_summarize(big, 4, &s);
    CHECK_NEAR(s.mean, 1e9 + 10, 1e-6);
    CHECK_NEAR(s.sd, sqrt(30.0), 1e-9);

    /* One observation: no interval. */
    hv_summarize(x, 1, &s);
    CHECK(s.n == 1);
    CHECK(!s.has_ci);
    CHECK(s.sd == 0.0);
    CHECK(isnan(s.ci_low));

    /* From moments, as the server gets them from SQL. */
    hv_summarize_moments(10, 50.0, 2.0, &s);
    CHECK_NEAR(s.ci_high - s.mean, 2.26215716 * 2.0 / sqrt(10.0), 1e-7);

    /* A zero mean has no relative width. */
    hv_summarize_moments(4, 0.0, 1.0, &s);
    CHECK(isnan(s.half_pct));
    return check_summary("test_stats");
}
