/* test_fileio.c — lib/fileio.c: whole files and streams read into memory,
 * within their bound, truncated only when asked, links refused when asked,
 * and every failure with its errno; files replaced whole or not at all,
 * with no temporary file left behind. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/hv-test-fileio-XXXXXX";

/* Writes n bytes of a repeating pattern (with NULs) to dir/name; returns
 * the path in a static buffer. */
static const char *make(const char *name, size_t n)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f != NULL && i < n; i++)
        fputc((int)(i % 7), f);
    if (f != NULL)
        fclose(f);
    return path;
}

/* True when buf holds the pattern make() writes, n bytes, NUL after. */
static bool pattern(const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (char)(i % 7))
            return false;
    return buf[n] == '\0';
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    size_t len = 99;
    char *b;

    printf("# sizes around the bound\n");
    const size_t sizes[] = {0, 1, 8191, 8192, 8193, 20000, 65535};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const char *p = make("f", sizes[k]);
        b = hv_read_file(p, 65535, 0, &len);
        CHECK_MSG(b != NULL && len == sizes[k] && pattern(b, len), "size %zu: read %zu", sizes[k],
                  b != NULL ? len : 0);
        free(b);
    }
    const char *p = make("big", 65536);
    errno = 0;
    b = hv_read_file(p, 65535, 0, &len);
    CHECK(b == NULL && errno == EFBIG);
    b = hv_read_file(p, 65535, HV_READ_TRUNCATE, &len);
    CHECK(b != NULL && len == 65535 && pattern(b, len));
    free(b);
    b = hv_read_file(p, 65536, 0, &len);
    CHECK(b != NULL && len == 65536 && pattern(b, len));
    free(b);

    printf("# errors\n");
    char missing[256];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    errno = 0;
    CHECK(hv_read_file(missing, 100, 0, &len) == NULL && errno == ENOENT);
    char link[256];
    snprintf(link, sizeof link, "%s/link", dir);
    CHECK(symlink(make("target", 10), link) == 0);
    b = hv_read_file(link, 100, 0, &len);
    CHECK(b != NULL && len == 10);
    free(b);
    errno = 0;
    CHECK(hv_read_file(link, 100, HV_READ_NOFOLLOW, &len) == NULL && errno == ELOOP);
    errno = 0;
    CHECK(hv_read_file(dir, 100, 0, &len) == NULL && errno == EISDIR);

    printf("# a stream from its position\n");
    FILE *f = tmpfile();
    CHECK(f != NULL);
    fputs("header\nbody", f);
    rewind(f);
    char line[16];
    CHECK(fgets(line, sizeof line, f) != NULL);
    b = hv_read_stream(f, 100, 0, &len);
    CHECK(b != NULL && len == 4 && strcmp(b, "body") == 0);
    free(b);
    fclose(f);

    printf("# replacing a file\n");
    char state[256], tmp[300];
    snprintf(state, sizeof state, "%s/state", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", state);
    CHECK(hv_file_replace(state, "first", 5, 0600) == 0);
    b = hv_read_file(state, 100, 0, &len);
    CHECK(b != NULL && len == 5 && strcmp(b, "first") == 0);
    free(b);
    struct stat st;
    CHECK(stat(state, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK(hv_file_replace(state, "second, longer", 14, 0600) == 0);
    b = hv_read_file(state, 100, 0, &len);
    CHECK(b != NULL && len == 14 && strcmp(b, "second, longer") == 0);
    free(b);
    CHECK(hv_file_replace(state, "", 0, 0600) == 0);
    CHECK(stat(state, &st) == 0 && st.st_size == 0);
    CHECK(access(tmp, F_OK) != 0);
    /* A rename that fails (a folder in the way) leaves nothing behind. */
    char sub[256];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0700) == 0);
    errno = 0;
    CHECK(hv_file_replace(sub, "x", 1, 0600) == -1 && errno == EISDIR);
    snprintf(tmp, sizeof tmp, "%s.tmp", sub);
    CHECK(access(tmp, F_OK) != 0);
    errno = 0;
    snprintf(missing, sizeof missing, "%s/no/such", dir);
    CHECK(hv_file_replace(missing, "x", 1, 0600) == -1 && errno == ENOENT);
    CHECK(hv_dir_sync(dir) == 0);
    errno = 0;
    CHECK(hv_dir_sync(missing) == -1 && errno == ENOENT);
    char moved[256];
    snprintf(moved, sizeof moved, "%s/moved", dir);
    CHECK(hv_file_rename(state, moved) == 0 && access(state, F_OK) != 0 &&
          access(moved, F_OK) == 0);
    errno = 0;
    CHECK(hv_file_rename(state, moved) == -1 && errno == ENOENT);
    rmdir(sub);

    unlink(link);
    char name[256];
    for (const char *const *n = (const char *const[]){"f", "big", "target", "moved", NULL}; *n;
         n++) {
        snprintf(name, sizeof name, "%s/%s", dir, *n);
        unlink(name);
    }
    rmdir(dir);
    return check_summary("fileio");
}
