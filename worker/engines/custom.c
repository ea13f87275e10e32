/* custom.c — site benchmarks; see custom.h. */
#include "worker/engines/custom.h"

#include "worker/engines/tools.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct hv_conf *conf;

void hv_custom_use(const struct hv_conf *c)
{
    conf = c;
}

/* A whole string as a finite number ("12.5", " 3e2 "). */
static int to_number(const char *s, size_t n, double *value)
{
    char buf[128];
    while (n > 0 && strchr(" \t\r\n", *s) != NULL)
        s++, n--;
    while (n > 0 && strchr(" \t\r\n", s[n - 1]) != NULL)
        n--;
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return -1;
    *value = v;
    return 0;
}

/* Follows a JSON Pointer (RFC 6901) from doc; NULL when it leads nowhere. */
static const json_t *follow(const json_t *doc, const char *pointer)
{
    const json_t *v = doc;
    const char *p = pointer;
    while (v != NULL && *p == '/') {
        p++;
        size_t n = strcspn(p, "/");
        char token[1024];
        size_t t = 0;
        for (size_t i = 0; i < n && t + 1 < sizeof token; i++) {
            if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
                token[t++] = p[i + 1] == '0' ? '~' : '/';
                i++;
            } else {
                token[t++] = p[i];
            }
        }
        token[t] = '\0';
        if (json_is_object(v)) {
            v = json_object_get(v, token);
        } else if (json_is_array(v)) {
            char *end;
            unsigned long i = strtoul(token, &end, 10);
            v = token[0] >= '0' && token[0] <= '9' && *end == '\0' && (token[0] != '0' || t == 1)
                    ? json_array_get(v, i)
                    : NULL;
        } else {
            v = NULL;
        }
        p += n;
    }
    return v;
}

int hv_custom_extract(const struct hv_site_bench *b, const char *text, size_t len, double *value,
                      char *err, size_t errlen)
{
    if (b->json_pointer != NULL) {
        json_error_t je;
        json_t *doc = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
        if (doc == NULL) {
            snprintf(err, errlen, "its standard output is not JSON (line %d: %s)", je.line,
                     je.text);
            return -1;
        }
        const json_t *v = follow(doc, b->json_pointer);
        int rc = 0;
        if (v == NULL) {
            snprintf(err, errlen, "its JSON output has no member at %s", b->json_pointer);
            rc = -1;
        } else if (json_is_number(v) && isfinite(json_number_value(v))) {
            *value = json_number_value(v);
        } else if (!json_is_string(v) ||
                   to_number(json_string_value(v), json_string_length(v), value) != 0) {
            snprintf(err, errlen, "its JSON output's %s is %s, not a number", b->json_pointer,
                     json_is_string(v) ? "a string without a number" : "no number");
            rc = -1;
        }
        json_decref(doc);
        return rc;
    }
    regmatch_t m[2];
    if (regexec(&b->regex, text, 2, m, 0) != 0) {
        snprintf(err, errlen, "its standard output does not match the regex \"%s\"", b->regex_src);
        return -1;
    }
    regmatch_t g = b->regex.re_nsub >= 1 && m[1].rm_so >= 0 ? m[1] : m[0];
    size_t n = (size_t)(g.rm_eo - g.rm_so);
    if (to_number(text + g.rm_so, n, value) != 0) {
        snprintf(err, errlen, "the regex \"%s\" matched \"%.*s\", which is not a number",
                 b->regex_src, n > 64 ? 64 : (int)n, text + g.rm_so);
        return -1;
    }
    return 0;
}

/* The names the worker has, for a message: "a, b" or "none". */
static void names(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; conf != NULL && i < conf->n_benchmarks && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", conf->benchmarks[i].name);
    if (buf[0] == '\0')
        snprintf(buf, len, "none");
}

/* What a run does: the declaration params.name of the worker's
 * configuration names, for kind; no I/O (the configuration was read at
 * start). Returns it, or NULL with out->error set. */
static const struct hv_site_bench *custom_settings(const struct hv_engine *e,
                                                   const struct hv_engine_ctx *ctx,
                                                   struct hv_engine_result *out)
{
    const char *kind = e->def->kind;
    json_t *p = hv_engine_params_check(e->def, ctx->params, hv_engine_cpus(), out->error,
                                       sizeof out->error);
    if (p == NULL)
        return NULL;
    const char *name = hv_params_str(p, "name");
    const struct hv_site_bench *b = hv_conf_find(conf, name);
    if (b == NULL) {
        char have[256];
        names(have, sizeof have);
        hv_engine_fail(out,
                       "this worker has no site benchmark \"%s\" (its administrator declares "
                       "them in the file given with --config; declared: %s)",
                       name, have);
    } else if (strcmp(b->kind, kind) != 0) {
        hv_engine_fail(out, "the site benchmark \"%s\" is of kind %s, not %s", name, b->kind, kind);
        b = NULL;
    }
    json_decref(p);
    return b;
}

int hv_custom_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                  struct hv_engine_result *out)
{
    const struct hv_site_bench *b = custom_settings(e, ctx, out);
    if (b == NULL)
        return -1;
    const char *name = b->name;
    json_object_set_new(out->observed, "benchmark", json_string(name));
    /* One number per run: nothing to judge steady state by. */
    json_object_set_new(out->observed, "steady_state",
                        json_pack("{s:n, s:i, s:n, s:n, s:b, s:s}", "steady", "window",
                                  HV_STEADY_WINDOW, "range_pct", "slope_pct", "assessed", false,
                                  "why", "a site benchmark reports one number"));
    json_object_set_new(out->observed, "timeout", json_real(b->timeout));
    char display[96];
    snprintf(display, sizeof display, "site benchmark %s", name);
    struct hv_run_spec spec = {.argv = b->argv, .display = display, .timeout = b->timeout};
    struct hv_run_result r;
    int rc = hv_tool_exec(ctx, out, &spec, &r);
    if (rc == 0) {
        if (r.out_truncated) {
            hv_engine_set_raw_of(out, r.out, r.out_len, r.out_total);
            rc = hv_engine_fail(out, "%s printed %zu bytes, more than the %zu hvbench reads",
                                display, r.out_total, r.out_len);
        } else {
            char err[512];
            double value;
            hv_engine_set_raw(out, r.out, r.out_len);
            if (hv_custom_extract(b, r.out, r.out_len, &value, err, sizeof err) != 0) {
                hv_tool_keep_failed_output(out, &r);
                rc = hv_engine_fail(out, "%s: %s", display, err);
            } else if (hv_engine_add_metric(out, b->metric, value, b->unit, b->higher_is_better) !=
                       0) {
                rc = hv_engine_fail(out, "out of memory");
            }
        }
    }
    hv_run_result_clear(&r);
    return rc;
}
