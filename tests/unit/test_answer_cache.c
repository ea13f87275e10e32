/* test_answer_cache.c — the answer cache: an answer is served only at the
 * generation it was read at and within its max age, the least recently
 * used key goes first, answers over the size bound and answers read
 * before a bump are not kept, and an older read does not replace a newer
 * one. Times are given, never measured. */
#include "server/answer_cache.h"

#include "check.h"

#include <stdlib.h>

/* Whether key's answer (at the current generation, at time now, max age
 * 1 s) is text. */
static bool holds(struct hv_answer_cache *c, int64_t key, double now, const char *text)
{
    char *got = hv_answer_cache_get(c, key, hv_write_gen(), now, 1.0);
    bool same = got != NULL && text != NULL && strcmp(got, text) == 0;
    bool none = got == NULL && text == NULL;
    free(got);
    return same || none;
}

static int put(struct hv_answer_cache *c, int64_t key, double read_at, const char *text)
{
    return hv_answer_cache_put(c, key, hv_write_gen(), read_at, text, strlen(text));
}

int main(void)
{
    struct hv_answer_cache *c = hv_answer_cache_new(3, 8);
    CHECK(c != NULL);
    CHECK(hv_answer_cache_new(0, 8) == NULL);

    /* Within the max age only: 0.999 s after the read, not 1.0 s. */
    CHECK(put(c, 1, 10.0, "one") == 1);
    CHECK(holds(c, 1, 10.0, "one"));
    CHECK(holds(c, 1, 10.999, "one"));
    CHECK(holds(c, 1, 11.0, NULL));
    CHECK(holds(c, 2, 10.0, NULL));

    /* A bump makes every answer stale; one read before it is not kept. */
    uint64_t before = hv_write_gen();
    hv_write_gen_bump();
    CHECK(hv_write_gen() == before + 1);
    CHECK(holds(c, 1, 10.5, NULL));
    CHECK(hv_answer_cache_put(c, 1, before, 10.5, "old", 3) == 0);
    CHECK(holds(c, 1, 10.5, NULL));
    CHECK(put(c, 1, 10.5, "new") == 1);
    CHECK(holds(c, 1, 10.6, "new"));

    /* An older read does not replace a newer one at the same generation. */
    CHECK(put(c, 1, 10.4, "older") == 0);
    CHECK(holds(c, 1, 10.6, "new"));
    CHECK(put(c, 1, 10.7, "newer") == 1);
    CHECK(holds(c, 1, 10.8, "newer"));

    /* Over max_len (8 bytes): not kept; exactly 8: kept. */
    CHECK(put(c, 2, 10.0, "123456789") == 0);
    CHECK(holds(c, 2, 10.1, NULL));
    CHECK(put(c, 2, 10.0, "12345678") == 1);
    CHECK(holds(c, 2, 10.1, "12345678"));

    /* Full at 3 keys: the least recently used one (key 1 was read last,
     * so key 2 is the oldest after key 3 comes in and 1 is read) goes. */
    CHECK(put(c, 3, 10.0, "three") == 1);
    CHECK(hv_answer_cache_count(c) == 3);
    CHECK(holds(c, 1, 10.8, "newer"));
    CHECK(put(c, 4, 10.0, "four") == 1);
    CHECK(hv_answer_cache_count(c) == 3);
    CHECK(holds(c, 2, 10.1, NULL));
    CHECK(holds(c, 1, 10.8, "newer"));
    CHECK(holds(c, 3, 10.1, "three"));
    CHECK(holds(c, 4, 10.1, "four"));

    /* Many keys through a small cache: each find after its put, and the
     * last three still there (chains and the use order stay consistent). */
    for (int64_t k = 100; k < 1100; k++) {
        char text[8];
        snprintf(text, sizeof text, "%lld", (long long)k % 1000);
        CHECK_MSG(put(c, k, 20.0, text) == 1, "key %lld", (long long)k);
        CHECK_MSG(holds(c, k, 20.0, text), "key %lld", (long long)k);
    }
    CHECK(hv_answer_cache_count(c) == 3);
    CHECK(holds(c, 1097, 20.0, "97"));
    CHECK(holds(c, 1098, 20.0, "98"));
    CHECK(holds(c, 1099, 20.0, "99"));
    CHECK(holds(c, 1096, 20.0, NULL));
    hv_answer_cache_free(c);
    return check_summary("answer_cache");
}
