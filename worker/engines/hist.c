/* hist.c — the latency histogram; see hist.h. */
#include "worker/engines/hist.h"

#include <math.h>
#include <string.h>

/* Values below 128 have a bucket each; above, the bucket of v is its
 * power of two (m, the top bit) and the next 6 bits below it. */
static size_t hist_index(uint64_t v)
{
    if (v < 128)
        return (size_t)v;
    int m = 63 - __builtin_clzll(v); /* 7..63 */
    int shift = m - 6;
    return 128 + (size_t)(m - 7) * 64 + (size_t)((v >> shift) - 64);
}

/* The smallest and largest value of bucket i. */
static void hist_bounds(size_t i, uint64_t *lo, uint64_t *hi)
{
    if (i < 128) {
        *lo = *hi = i;
        return;
    }
    size_t g = (i - 128) / 64, sub = (i - 128) % 64;
    int shift = (int)g + 1; /* m - 6 with m = g + 7 */
    *lo = (uint64_t)(64 + sub) << shift;
    *hi = *lo + ((1ULL << shift) - 1);
}

void hv_hist_reset(struct hv_hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

void hv_hist_add(struct hv_hist *h, uint64_t value)
{
    h->bucket[hist_index(value)]++;
    h->count++;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
}

void hv_hist_merge(struct hv_hist *into, const struct hv_hist *from)
{
    if (from->count == 0)
        return;
    for (size_t i = 0; i < HV_HIST_BUCKETS; i++)
        into->bucket[i] += from->bucket[i];
    into->count += from->count;
    if (from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
}

uint64_t hv_hist_percentile(const struct hv_hist *h, double pct)
{
    if (h->count == 0)
        return 0;
    double r = ceil(pct / 100.0 * (double)h->count);
    uint64_t rank = r < 1 ? 1 : r > (double)h->count ? h->count : (uint64_t)r;
    uint64_t seen = 0;
    for (size_t i = 0; i < HV_HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t lo, hi;
            hist_bounds(i, &lo, &hi);
            uint64_t mid = lo + (hi - lo) / 2;
            return mid < h->min ? h->min : mid > h->max ? h->max : mid;
        }
    }
    return h->max;
}
