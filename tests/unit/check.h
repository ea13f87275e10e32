/* check.h — the few assertions the unit tests need.
 *
 * Each CHECK prints the failing expression with its file and line (after
 * flushing stdout, so a failure lands under the section a test printed);
 * CHECK_MSG adds a printf-style line saying which case failed and with
 * what. A test program ends with `return check_summary("name");`, which
 * prints the count and returns the exit status (0 only when nothing
 * failed). check_json and check_slurp read a test's own inputs. */
#ifndef HV_TEST_CHECK_H
#define HV_TEST_CHECK_H

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_run, check_failed;

/* Counts one check; when ok is false, counts the failure and prints
 * "file:line: " and the formatted text to stderr. Returns ok. */
__attribute__((format(printf, 4, 5))) static inline bool check_ok(bool ok, const char *file,
                                                                  int line, const char *fmt, ...)
{
    check_run++;
    if (ok)
        return true;
    check_failed++;
    fflush(stdout);
    fprintf(stderr, "%s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return false;
}

/* The indented line under a failure that says which case it was. */
__attribute__((format(printf, 1, 2))) static inline void check_note(const char *fmt, ...)
{
    fputs("  ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define CHECK(cond) ((void)check_ok(!!(cond), __FILE__, __LINE__, "CHECK failed: %s", #cond))

/* CHECK(cond), and on failure the message (a printf format and its
 * arguments, evaluated only then) on the next line. */
#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!check_ok(!!(cond), __FILE__, __LINE__, "CHECK failed: %s", #cond))                    \
            check_note(__VA_ARGS__);                                                               \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        check_ok(a_ != NULL && b_ != NULL && strcmp(a_, b_) == 0, __FILE__, __LINE__,              \
                 "CHECK_STR failed: %s = \"%s\", expected \"%s\"", #a, a_ ? a_ : "(null)",         \
                 b_ ? b_ : "(null)");                                                              \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        check_ok(fabs(a_ - b_) <= (tol), __FILE__, __LINE__,                                       \
                 "CHECK_NEAR failed: %s = %.10g, expected %.10g", #a, a_, b_);                     \
    } while (0)

/* Parses JSON text written in a test (any value, duplicates refused) or
 * exits 99: a broken test is not a failure of the code under test. The
 * caller owns the value. */
static inline json_t *check_json(const char *text)
{
    json_error_t err;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
    if (v == NULL) {
        fprintf(stderr, "bad test JSON: %s: %s\n", text, err.text);
        exit(99);
    }
    return v;
}

/* The whole of a text file (a doc or example the test reads), NUL
 * terminated, or NULL when it cannot be read. The caller frees it. */
static inline char *check_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (bigger == NULL)
                free(buf);
            buf = bigger;
        }
    }
    fclose(f);
    if (buf != NULL)
        buf[n] = '\0';
    return buf;
}

/* Counts one check and prints it either way, "ok    TEXT" or "FAIL  TEXT"
 * on stdout: for tests whose output reads as the list of what they
 * checked. */
__attribute__((format(printf, 2, 3))) static inline void check_say(bool ok, const char *fmt, ...)
{
    check_run++;
    if (!ok)
        check_failed++;
    fputs(ok ? "ok    " : "FAIL  ", stdout);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}
#define CHECK_SAY(cond, ...) check_say(!!(cond), __VA_ARGS__)

/* Prints "name: N checks, M failed"; the exit status, 0 only when no
 * check failed. */
static inline int check_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_run, check_failed);
    return check_failed == 0 ? 0 : 1;
}

#endif
