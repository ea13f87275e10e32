/* sim.h — seeded data of known truth for the statistics tests.
 *
 * Normal deviates by Box–Muller from lib/rng.h's splitmix64; every
 * simulation seeds its generator from its seed number, never the clock, so
 * a rate printed once is the rate every run prints. */
#ifndef HV_TEST_SIM_H
#define HV_TEST_SIM_H

#include "rng.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/** The generator of simulation `seed` of experiment `stream`: distinct
 *  experiments with the same seed numbers draw unrelated data. */
static inline uint64_t sim_state(uint64_t stream, uint64_t seed)
{
    uint64_t s = stream * 0xd1342543de82ef95ULL + seed;
    (void)hv_rng_next(&s);
    return s;
}

/** A standard normal deviate (Box–Muller; the second deviate is dropped
 *  to keep the state simple). */
static inline double sim_normal(uint64_t *state)
{
    double u = hv_rng_uniform(state), v = hv_rng_uniform(state);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/** n values of mean mu and coefficient of variation cv (normal). */
static inline void sim_sample(uint64_t *state, double mu, double cv, double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = mu * (1.0 + cv * sim_normal(state));
}

/** The share of k in n, in %. */
static inline double sim_pct(size_t k, size_t n)
{
    return 100.0 * (double)k / (double)n;
}

#endif
