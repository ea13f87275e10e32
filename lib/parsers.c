/* parsers.c — see parsers.h: the table of tools and what every parse does
 * before and after the tool's own parser. */
#include "parsers.h"

#include "parse_util.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One row per line of tools.def, in its order; parse_<tool>.c holds the
 * description. */
static const struct hv_tool_parser *const parsers[] = {
#define HV_TOOL(id, kind, guess) &hv_tool_parser_##id,
#include "tools.def"
#undef HV_TOOL
};

#define N_PARSERS (sizeof parsers / sizeof parsers[0])

/* Whether tool is p's name or one of its aliases. */
static bool names(const struct hv_tool_parser *p, const char *tool)
{
    if (strcmp(p->name, tool) == 0)
        return true;
    for (const char *const *a = p->aliases; a != NULL && *a != NULL; a++)
        if (strcmp(*a, tool) == 0)
            return true;
    return false;
}

const struct hv_tool_parser *hv_parser_find(const char *tool)
{
    if (tool == NULL)
        return NULL;
    for (size_t i = 0; i < N_PARSERS; i++)
        if (names(parsers[i], tool))
            return parsers[i];
    return NULL;
}

static const char *tool_names[N_PARSERS + 1];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void fill_names(void)
{
    for (size_t i = 0; i < N_PARSERS; i++)
        tool_names[i] = parsers[i]->name;
}

const char *const *hv_parser_names(void)
{
    pthread_once(&names_once, fill_names);
    return tool_names;
}

/* After a parser found an output not its tool's: names the tool it looks
 * like, when hv_parser_guess() recognises another one. */
static void name_other_tool(const char *text, const struct hv_tool_parser *p, char *err,
                            size_t errlen)
{
    const char *other = hv_parser_guess(text);
    size_t n = strlen(err);
    if (other != NULL && strcmp(other, p->name) != 0 && n < errlen)
        snprintf(err + n, errlen - n, " (it looks like %s output: import it as tool %s)", other,
                 other);
}

int hv_parse_tool_runs(const char *tool, const char *text, size_t len, json_t **runs, char *err,
                       size_t errlen)
{
    return hv_parse_tool_table_runs(tool, text, len, 0, runs, err, errlen);
}

int hv_parse_tool_table_runs(const char *tool, const char *text, size_t len, int table,
                             json_t **runs, char *err, size_t errlen)
{
    *runs = NULL;
    const struct hv_tool_parser *p = hv_parser_find(tool);
    if (p == NULL) {
        char names[128] = "";
        size_t n = 0;
        for (size_t i = 0; i < N_PARSERS; i++)
            n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s",
                                  i ? ", " : "", parsers[i]->name);
        return hv_perr(err, errlen, tool != NULL ? tool : "(null)",
                       "unknown tool; hvbench reads %s", names);
    }
    if (table != 0 && (table < 0 || p->parse_table == NULL))
        return hv_perr(err, errlen, p->display,
                       table < 0 ? "table %d: tables count from 1"
                                 : "its outputs hold no tables to pick from (table %d)",
                       table);
    if (text == NULL)
        len = 0;
    const char *nul = len > 0 ? memchr(text, '\0', len) : NULL;
    if (nul != NULL)
        return hv_perr(err, errlen, p->display,
                       "the output holds a NUL byte at offset %zu: not a text output",
                       (size_t)(nul - text));
    size_t blank = 0;
    while (blank < len && strchr(" \t\r\n", text[blank]) != NULL)
        blank++;
    if (blank == len)
        return hv_perr(err, errlen, p->display, "the output is empty");
    /* The parsers want a NUL-terminated text; the caller's need not be. */
    char *copy = malloc(len + 1);
    json_t *all = json_array();
    if (copy == NULL || all == NULL) {
        free(copy);
        json_decref(all);
        return hv_perr(err, errlen, p->display, "out of memory");
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = table > 0 ? p->parse_table(copy, len, table, all, err, errlen)
                       : p->parse(copy, len, all, err, errlen);
    if (rc == HV_PARSE_NOT_MINE)
        name_other_tool(copy, p, err, errlen);
    free(copy);
    if (rc == 0 && json_array_size(all) == 0)
        rc = hv_perr(err, errlen, p->display, "no run found in the output");
    size_t i;
    json_t *run;
    json_array_foreach(all, i, run)
    {
        if (rc == 0 && json_array_size(hv_prun_metrics(run)) == 0)
            rc = hv_perr(err, errlen, p->display,
                         json_array_size(all) > 1 ? "run %zu of the output has no metric"
                                                  : "no metric in the output (run %zu)",
                         i + 1);
    }
    if (rc != 0) {
        json_decref(all);
        return -1;
    }
    *runs = all;
    return 0;
}

int hv_parse_tool_run(const char *tool, const char *text, size_t len, json_t **run, char *err,
                      size_t errlen)
{
    *run = NULL;
    json_t *runs;
    if (hv_parse_tool_runs(tool, text, len, &runs, err, errlen) != 0)
        return -1;
    if (json_array_size(runs) != 1) {
        int rc = hv_perr(err, errlen, hv_parser_find(tool)->display,
                         "the output holds %zu runs; one was expected", json_array_size(runs));
        json_decref(runs);
        return rc;
    }
    *run = json_incref(json_array_get(runs, 0));
    json_decref(runs);
    return 0;
}

int hv_parse_tool_output(const char *tool, const char *text, size_t len, json_t **metrics,
                         json_t **info, char *err, size_t errlen)
{
    *metrics = *info = NULL;
    json_t *run;
    if (hv_parse_tool_run(tool, text, len, &run, err, errlen) != 0)
        return -1;
    *metrics = json_incref(hv_prun_metrics(run));
    *info = json_incref(hv_prun_info(run));
    json_decref(run);
    return 0;
}
