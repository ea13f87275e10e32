/* fuzz.c — see fuzz.h. */
#include "fuzz.h"

#include "parsers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer calls this once before the first input when it is defined. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    /* jansson seeds its hash function from /dev/urandom; a fixed seed
     * makes every run of an input do the same work. */
    json_object_seed(1);
    return 0;
}

void fuzz_require(bool ok, const char *what, const char *file, int line)
{
    if (ok)
        return;
    fprintf(stderr, "%s:%d: promise broken: %s\n", file, line, what);
    abort();
}

char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    FUZZ_REQUIRE(s != NULL);
    if (size > 0)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

json_t *fuzz_json_body(const uint8_t *data, size_t size)
{
    json_error_t err;
    return json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &err);
}

void fuzz_check_errors(const json_t *errors, bool some)
{
    FUZZ_REQUIRE(json_is_array(errors));
    FUZZ_REQUIRE(!some || json_array_size(errors) > 0);
    size_t i;
    const json_t *e;
    json_array_foreach(errors, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        const char *message = json_string_value(json_object_get(e, "message"));
        FUZZ_REQUIRE(path != NULL && (path[0] == '\0' || path[0] == '/'));
        FUZZ_REQUIRE(message != NULL && message[0] != '\0');
    }
}

/* A number member of o, which must be there and finite. */
static double finite_member(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    FUZZ_REQUIRE(json_is_number(v));
    double d = json_number_value(v);
    FUZZ_REQUIRE(isfinite(d));
    return d;
}

/* One run of a successful parse, as parsers.h describes it. */
static void check_run(const json_t *run, const struct hv_tool_parser *p)
{
    static const char *const formats[] = {"json", "csv", "table", "text", "yaml"};
    const json_t *metrics = json_object_get(run, "metrics");
    FUZZ_REQUIRE(json_array_size(metrics) > 0);
    size_t i;
    const json_t *m;
    json_array_foreach(metrics, i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        FUZZ_REQUIRE(name != NULL && name[0] != '\0');
        FUZZ_REQUIRE(json_is_string(json_object_get(m, "unit")));
        FUZZ_REQUIRE(json_is_boolean(json_object_get(m, "higher_is_better")));
        finite_member(m, "value");
        for (size_t k = 0; k < i; k++)
            FUZZ_REQUIRE(strcmp(name, json_string_value(json_object_get(json_array_get(metrics, k),
                                                                        "name"))) != 0);
    }
    const json_t *info = json_object_get(run, "info");
    const char *info_tool = json_string_value(json_object_get(info, "tool"));
    const char *format = json_string_value(json_object_get(info, "format"));
    FUZZ_REQUIRE(info_tool != NULL &&
                 (strcmp(info_tool, p->name) == 0 || strcmp(info_tool, p->display) == 0));
    bool known = false;
    for (size_t k = 0; format != NULL && k < sizeof formats / sizeof formats[0]; k++)
        known |= strcmp(format, formats[k]) == 0;
    FUZZ_REQUIRE(known);
    const json_t *samples = json_object_get(run, "samples");
    FUZZ_REQUIRE(samples == NULL || json_is_array(samples));
    const json_t *s;
    json_array_foreach(samples, i, s)
    {
        FUZZ_REQUIRE(json_is_string(json_object_get(s, "metric")));
        finite_member(s, "t");
        finite_member(s, "value");
    }
}

int fuzz_tool_output(const char *tool, const uint8_t *data, size_t size)
{
    const struct hv_tool_parser *p = hv_parser_find(tool);
    FUZZ_REQUIRE(p != NULL);
    char err[HV_PARSE_ERR_MAX];
    memset(err, 'x', sizeof err); /* an unterminated message shows */
    json_t *runs = NULL;
    int rc = hv_parse_tool_runs(tool, (const char *)data, size, &runs, err, sizeof err);
    FUZZ_REQUIRE(rc == 0 || rc == -1);
    if (rc == 0) {
        FUZZ_REQUIRE(json_array_size(runs) > 0);
        size_t i;
        const json_t *run;
        json_array_foreach(runs, i, run) check_run(run, p);
        /* What the worker uploads and the server stores is this text. */
        char *text = json_dumps(runs, JSON_COMPACT);
        FUZZ_REQUIRE(text != NULL);
        free(text);
        /* The identity an import records: an object, and the runs'
         * alike check a sentence naming the tool when it refuses. */
        json_t *params = NULL;
        FUZZ_REQUIRE(hv_parse_identity_apply(tool, runs, NULL, &params, err, sizeof err) == 0);
        FUZZ_REQUIRE(json_is_object(params));
        json_decref(params);
        memset(err, 'x', sizeof err);
        if (hv_parse_runs_alike(tool, runs, err, sizeof err) != 0) {
            size_t n = strlen(p->display);
            FUZZ_REQUIRE(memchr(err, '\0', sizeof err) != NULL);
            FUZZ_REQUIRE(strncmp(err, p->display, n) == 0 && err[n] == ':');
        }
    } else {
        FUZZ_REQUIRE(runs == NULL);
        FUZZ_REQUIRE(memchr(err, '\0', sizeof err) != NULL);
        size_t n = strlen(p->display);
        FUZZ_REQUIRE(strncmp(err, p->display, n) == 0 && err[n] == ':');
    }
    json_decref(runs);

    char *s = fuzz_cstr(data, size);
    const char *guess = hv_parser_guess(s);
    FUZZ_REQUIRE(guess == NULL || hv_parser_find(guess) != NULL);
    free(s);
    return 0;
}
