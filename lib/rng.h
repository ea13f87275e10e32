/* rng.h — a small seeded pseudo-random generator (splitmix64).
 *
 * Contract: the same seed gives the same sequence on every platform, so a
 * permutation test or a simulation replays exactly from its recorded seed.
 * The state is the caller's (one uint64_t); nothing is global, so the
 * functions are thread safe as long as each thread has its own state. Not
 * for cryptography. */
#ifndef HV_RNG_H
#define HV_RNG_H

#include <stddef.h>
#include <stdint.h>

/** The next 64 random bits; advances *state. */
static inline uint64_t hv_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/** xorshift64*: the generator of the engines' input data (CPU kernel
 *  inputs, disk offsets). Kept apart from hv_rng_next because a CPU
 *  kernel's inputs define its score: changing the generator would move
 *  every score against older results. *state must not be 0. */
static inline uint64_t hv_rng_xorshift(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/** A uniform double in (0, 1): never 0, so its logarithm is finite. */
static inline double hv_rng_uniform(uint64_t *state)
{
    return ((double)(hv_rng_next(state) >> 11) + 0.5) * 0x1.0p-53;
}

/** A uniform integer in [0, n) for n >= 1, without modulo bias
 *  (Lemire's multiply-and-reject). */
static inline size_t hv_rng_below(uint64_t *state, size_t n)
{
    uint64_t bound = (uint64_t)n;
    __uint128_t m = (__uint128_t)hv_rng_next(state) * bound;
    uint64_t low = (uint64_t)m;
    if (low < bound) {
        uint64_t floor = -bound % bound;
        while (low < floor) {
            m = (__uint128_t)hv_rng_next(state) * bound;
            low = (uint64_t)m;
        }
    }
    return (size_t)(m >> 64);
}

#endif
