/* check.h — the few assertions the unit tests need.
 *
 * Each CHECK prints the failing expression with its file and line; a test
 * program ends with `return check_summary("name");`, which prints the
 * count and returns the exit status (0 only when nothing failed). */
#ifndef HV_TEST_CHECK_H
#define HV_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_run, check_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_run++;                                                                               \
        if (!(cond)) {                                                                             \
            check_failed++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        check_run++;                                                                               \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) {                                     \
            check_failed++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s = \"%s\", expected \"%s\"\n", __FILE__,   \
                    __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                         \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        check_run++;                                                                               \
        if (!(fabs(a_ - b_) <= (tol))) {                                                           \
            check_failed++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.10g, expected %.10g\n", __FILE__,    \
                    __LINE__, #a, a_, b_);                                                         \
        }                                                                                          \
    } while (0)

static inline int check_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_run, check_failed);
    return check_failed == 0 ? 0 : 1;
}

#endif
