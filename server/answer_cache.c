/* answer_cache.c — see answer_cache.h.
 *
 * A cache is a fixed array of entries, found by key through a chained hash
 * table and ordered by use in a doubly linked list (indexes, not
 * pointers): a full cache reuses its least recently used entry. */
#include "answer_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NONE (-1)

static atomic_uint_fast64_t write_gen;

uint64_t hv_write_gen(void)
{
    return atomic_load_explicit(&write_gen, memory_order_acquire);
}

void hv_write_gen_bump(void)
{
    atomic_fetch_add_explicit(&write_gen, 1, memory_order_acq_rel);
}

struct entry {
    int64_t key;
    uint64_t gen;   /* the write generation read before its statement */
    double read_at; /* hv_monotonic() seconds, before its statement */
    char *text;     /* malloc'd, NUL-terminated */
    size_t len;
    int next_in_bucket;
    int newer, older; /* the use order */
};

struct hv_answer_cache {
    pthread_mutex_t lock;
    size_t max_len;
    unsigned max_keys, used;
    unsigned mask; /* buckets - 1, buckets a power of two */
    int *buckets;  /* first entry of each chain, or NONE */
    int newest, oldest;
    struct entry entries[];
};

static unsigned bucket_of(const struct hv_answer_cache *c, int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15u;
    return (unsigned)(h >> 32) & c->mask;
}

struct hv_answer_cache *hv_answer_cache_new(unsigned max_keys, size_t max_len)
{
    if (max_keys == 0 || max_keys > (1u << 20))
        return NULL;
    unsigned buckets = 1;
    while (buckets < 2 * max_keys)
        buckets *= 2;
    struct hv_answer_cache *c = calloc(1, sizeof *c + max_keys * sizeof c->entries[0]);
    if (c == NULL)
        return NULL;
    c->buckets = malloc(buckets * sizeof *c->buckets);
    if (c->buckets == NULL || pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c->buckets);
        free(c);
        return NULL;
    }
    for (unsigned i = 0; i < buckets; i++)
        c->buckets[i] = NONE;
    c->mask = buckets - 1;
    c->max_keys = max_keys;
    c->max_len = max_len;
    c->newest = c->oldest = NONE;
    return c;
}

void hv_answer_cache_free(struct hv_answer_cache *c)
{
    if (c == NULL)
        return;
    for (unsigned i = 0; i < c->used; i++)
        free(c->entries[i].text);
    pthread_mutex_destroy(&c->lock);
    free(c->buckets);
    free(c);
}

/* The entry of key, or NONE. */
static int find(const struct hv_answer_cache *c, int64_t key)
{
    int i = c->buckets[bucket_of(c, key)];
    while (i != NONE && c->entries[i].key != key)
        i = c->entries[i].next_in_bucket;
    return i;
}

/* Takes entry i out of the use order. */
static void unlink_use(struct hv_answer_cache *c, int i)
{
    struct entry *e = &c->entries[i];
    if (e->newer != NONE)
        c->entries[e->newer].older = e->older;
    else
        c->newest = e->older;
    if (e->older != NONE)
        c->entries[e->older].newer = e->newer;
    else
        c->oldest = e->newer;
}

/* Puts entry i first in the use order (it is not in it). */
static void link_newest(struct hv_answer_cache *c, int i)
{
    struct entry *e = &c->entries[i];
    e->newer = NONE;
    e->older = c->newest;
    if (c->newest != NONE)
        c->entries[c->newest].newer = i;
    c->newest = i;
    if (c->oldest == NONE)
        c->oldest = i;
}

/* Takes entry i out of its hash chain. */
static void unlink_bucket(struct hv_answer_cache *c, int i)
{
    int *p = &c->buckets[bucket_of(c, c->entries[i].key)];
    while (*p != i)
        p = &c->entries[*p].next_in_bucket;
    *p = c->entries[i].next_in_bucket;
}

char *hv_answer_cache_get(struct hv_answer_cache *c, int64_t key, uint64_t gen, double now,
                          double max_age)
{
    char *copy = NULL;
    pthread_mutex_lock(&c->lock);
    int i = find(c, key);
    if (i != NONE) {
        struct entry *e = &c->entries[i];
        if (e->gen == gen && now - e->read_at < max_age) {
            copy = malloc(e->len + 1);
            if (copy != NULL)
                memcpy(copy, e->text, e->len + 1);
            if (c->newest != i) {
                unlink_use(c, i);
                link_newest(c, i);
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    return copy;
}

int hv_answer_cache_put(struct hv_answer_cache *c, int64_t key, uint64_t gen, double read_at,
                        const char *text, size_t len)
{
    if (len > c->max_len)
        return 0;
    /* Copied outside the lock; dropped if it is not kept after all. */
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, text, len);
    copy[len] = '\0';
    pthread_mutex_lock(&c->lock);
    bool kept = false;
    if (gen == hv_write_gen()) {
        int i = find(c, key);
        if (i != NONE) {
            struct entry *e = &c->entries[i];
            if (gen > e->gen || read_at >= e->read_at) {
                free(e->text);
                e->text = copy;
                e->len = len;
                e->gen = gen;
                e->read_at = read_at;
                kept = true;
            }
            if (c->newest != i) {
                unlink_use(c, i);
                link_newest(c, i);
            }
        } else {
            if (c->used < c->max_keys) {
                i = (int)c->used++;
            } else {
                i = c->oldest;
                unlink_use(c, i);
                unlink_bucket(c, i);
                free(c->entries[i].text);
            }
            struct entry *e = &c->entries[i];
            *e = (struct entry){
                .key = key, .gen = gen, .read_at = read_at, .text = copy, .len = len};
            unsigned b = bucket_of(c, key);
            e->next_in_bucket = c->buckets[b];
            c->buckets[b] = i;
            link_newest(c, i);
            kept = true;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (!kept)
        free(copy);
    return kept ? 1 : 0;
}

unsigned hv_answer_cache_count(struct hv_answer_cache *c)
{
    pthread_mutex_lock(&c->lock);
    unsigned n = c->used;
    pthread_mutex_unlock(&c->lock);
    return n;
}
