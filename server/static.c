/* static.c — see static.h. */
#include "static.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct hv_static_file files[] = {
    {"/", "index.html", "text/html; charset=utf-8", NULL, 0},
    {"/index.html", "index.html", "text/html; charset=utf-8", NULL, 0},
    {"/app.js", "app.js", "text/javascript; charset=utf-8", NULL, 0},
    {"/style.css", "style.css", "text/css; charset=utf-8", NULL, 0},
};

#define N_FILES         (sizeof files / sizeof files[0])
#define MAX_STATIC_FILE (8u << 20)

/* Reads a whole file into a malloc'd buffer; NULL on failure. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size >= 0 && (size_t)size <= MAX_STATIC_FILE && fseek(f, 0, SEEK_SET) == 0) {
            buf = malloc((size_t)size + 1);
            if (buf != NULL && fread(buf, 1, (size_t)size, f) != (size_t)size) {
                free(buf);
                buf = NULL;
            } else if (buf != NULL) {
                *len = (size_t)size;
            }
        }
    }
    fclose(f);
    return buf;
}

int hv_static_load(const char *dir)
{
    int loaded = 0;
    for (size_t i = 0; i < N_FILES; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[i].file);
        free(files[i].data);
        files[i].data = slurp(path, &files[i].len);
        if (files[i].data == NULL)
            hv_warn("web: cannot read %s; %s will answer 404", path, files[i].url);
        else
            loaded++;
    }
    return loaded;
}

const struct hv_static_file *hv_static_find(const char *url)
{
    for (size_t i = 0; i < N_FILES; i++)
        if (strcmp(files[i].url, url) == 0)
            return files[i].data != NULL ? &files[i] : NULL;
    return NULL;
}
