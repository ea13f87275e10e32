/* answer_cache.h — answers kept in memory for a moment, and the write
 * generation that tells when they no longer hold.
 *
 * The write generation is a counter of this process: every request that
 * can change state (any method but GET and HEAD) bumps it once its handler
 * has answered and before the answer is queued, and so does every
 * background thread of the server that changes rows a read shows. An
 * answer is kept with the generation read *before* its statement ran, so
 * an entry whose generation is still the current one was read after every
 * change made through this server had committed: a client never reads,
 * from the cache, an answer older than a change it made here. Changes made
 * elsewhere (another server on the same database, psql) show once the
 * entry is older than the cache's max age.
 *
 * A cache holds at most a fixed number of keys (the least recently used is
 * dropped) and keeps no answer longer than a fixed size. Every function is
 * thread safe: a mutex guards each cache; the generation is an atomic. */
#ifndef HV_SERVER_ANSWER_CACHE_H
#define HV_SERVER_ANSWER_CACHE_H

#include <stddef.h>
#include <stdint.h>

/** The write generation now. Read it before the statement whose answer is
 *  kept, and pass it to hv_answer_cache_put(). */
uint64_t hv_write_gen(void);

/** Bumps the write generation: every kept answer becomes stale. Call after
 *  the change committed, before anyone is told of it. */
void hv_write_gen_bump(void);

struct hv_answer_cache;

/** A new, empty cache of at most max_keys answers, none longer than
 *  max_len bytes (longer ones are not kept). NULL when memory runs out. */
struct hv_answer_cache *hv_answer_cache_new(unsigned max_keys, size_t max_len);

/** Frees c and every answer it holds (NULL: nothing). */
void hv_answer_cache_free(struct hv_answer_cache *c);

/** A malloc'd, NUL-terminated copy of key's answer, which the caller
 *  frees, when one is kept with generation gen (pass hv_write_gen()) and
 *  was read less than max_age seconds before now (hv_monotonic()
 *  seconds); it becomes the most recently used. NULL otherwise (or when
 *  memory runs out). */
char *hv_answer_cache_get(struct hv_answer_cache *c, int64_t key, uint64_t gen, double now,
                          double max_age);

/** Keeps a copy of text (len bytes, without the NUL) as key's answer,
 *  read at read_at (hv_monotonic() seconds, taken before its statement)
 *  with generation gen (read at the same time). Not kept: an answer longer
 *  than the cache's max_len, one whose generation is no longer the current
 *  one (it may be stale already), and one older than the answer kept for
 *  key. Returns 1 when kept, 0 when not. */
int hv_answer_cache_put(struct hv_answer_cache *c, int64_t key, uint64_t gen, double read_at,
                        const char *text, size_t len);

/** How many answers c holds now. */
unsigned hv_answer_cache_count(struct hv_answer_cache *c);

#endif
