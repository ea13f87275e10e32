/* config.c — the client's configuration file (config.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/config.h"

int cli_config_path(char *buf, size_t len)
{
    const char *explicit = getenv("HVBENCH_CONFIG");
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    int n;
    if (explicit != NULL && explicit[0] != '\0')
        n = snprintf(buf, len, "%s", explicit);
    else if (xdg != NULL && xdg[0] == '/')
        n = snprintf(buf, len, "%s/hvbench/config", xdg);
    else if (home != NULL && home[0] != '\0')
        n = snprintf(buf, len, "%s/.config/hvbench/config", home);
    else
        return -1;
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Strips blanks at both ends of s, in place; returns the start. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

int cli_config_read(const char *path, int required, struct cli_config *cfg, char *err, size_t len)
{
    memset(cfg, 0, sizeof *cfg);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        if (errno == ENOENT && !required)
            return 0;
        snprintf(err, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    bool shared = fstat(fileno(f), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0;
    char line[4096];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            snprintf(err, len, "%s:%d: the line is longer than %zu bytes", path, lineno,
                     sizeof line - 2);
            rc = -1;
            break;
        }
        char *s = trim(line);
        if (s[0] == '\0' || s[0] == '#')
            continue;
        char *eq = strchr(s, '=');
        if (eq == NULL) {
            snprintf(err, len, "%s:%d: expected 'key = value'", path, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        char **slot = strcmp(key, "server") == 0  ? &cfg->server
                      : strcmp(key, "token") == 0 ? &cfg->token
                                                  : NULL;
        if (slot == NULL) {
            snprintf(err, len, "%s:%d: unknown key '%.64s' (the keys are server and token)", path,
                     lineno, key);
            rc = -1;
        } else if (value[0] == '\0') {
            snprintf(err, len, "%s:%d: %s has no value", path, lineno, key);
            rc = -1;
        } else if (*slot != NULL) {
            snprintf(err, len, "%s:%d: %s is set twice", path, lineno, key);
            rc = -1;
        } else if ((*slot = strdup(value)) == NULL) {
            snprintf(err, len, "%s: out of memory", path);
            rc = -1;
        }
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, len, "%s: cannot read it", path);
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && cfg->token != NULL && shared) {
        snprintf(err, len,
                 "%s holds a token but other users may read it: chmod 600 it (or keep the token "
                 "in HVBENCH_TOKEN)",
                 path);
        rc = -1;
    }
    if (rc != 0)
        cli_config_free(cfg);
    return rc;
}

void cli_config_free(struct cli_config *cfg)
{
    free(cfg->server);
    free(cfg->token);
    cfg->server = cfg->token = NULL;
}
