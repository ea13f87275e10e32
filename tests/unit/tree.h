/* tree.h — temporary file trees the unit tests build to stand for a
 * machine's /sys or /proc (the readers take a root folder). */
#ifndef HV_TEST_TREE_H
#define HV_TEST_TREE_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Writes text to root + rel (rel starts with '/'), making the folders on
 * the way. A file that cannot be written is left out: the check reading
 * it fails instead. */
static inline void tree_put(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", root, rel);
    for (char *q = path + strlen(root) + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            mkdir(path, 0755);
            *q = '/';
        }
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

#endif
