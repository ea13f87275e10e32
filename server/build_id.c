/* build_id.c — see build_id.h. */
#include "build_id.h"

#include "auth.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char build_id[HV_BUILD_ID_MAX];
static pthread_once_t build_id_once = PTHREAD_ONCE_INIT;

static void build_id_init(void)
{
    FILE *f = fopen("/proc/self/exe", "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (bool ok = f != NULL; ok;) {
        if (len == cap) {
            char *more = realloc(buf, cap = cap ? 2 * cap : 1 << 22);
            if (more == NULL)
                break;
            buf = more;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        ok = n > 0;
        if (!ok && ferror(f) == 0 && feof(f) != 0) {
            char hex[65];
            hv_sha256_hex(buf, len, hex);
            snprintf(build_id, sizeof build_id, "exe:%s", hex);
        }
    }
    if (f != NULL)
        fclose(f);
    free(buf);
    if (build_id[0] == '\0')
        snprintf(build_id, sizeof build_id, "process:%ld:%lld", (long)getpid(),
                 (long long)time(NULL));
}

const char *hv_build_id(void)
{
    pthread_once(&build_id_once, build_id_init);
    return build_id;
}
