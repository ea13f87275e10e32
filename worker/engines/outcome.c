/* outcome.c — what engines call while they run: the CPU count, their
 * params check, results (metrics, samples, raw output, failure), the stop
 * flag and the steady-state verdict; see engine.h. */
#include "worker/engines/engine.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long hv_engine_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

json_t *hv_engine_params_check(const struct hv_engine_def *def, const json_t *params, long cpus,
                               char *err, size_t len)
{
    json_t *p = params == NULL || json_is_null(params) ? json_object() : json_deep_copy(params);
    json_t *errors = json_array();
    if (p == NULL || errors == NULL) {
        json_decref(p);
        json_decref(errors);
        snprintf(err, len, "out of memory");
        return NULL;
    }
    struct hv_target_facts here = {.name = NULL, .cpus = cpus};
    if (hv_engine_def_check(def, p, "/params", errors) == 0 &&
        hv_engine_def_fit(def, p, &here, "/params", errors) == 0) {
        json_decref(errors);
        return p;
    }
    json_t *e = json_array_get(errors, 0);
    snprintf(err, len, "invalid params: %s: %s", json_string_value(json_object_get(e, "path")),
             json_string_value(json_object_get(e, "message")));
    json_decref(errors);
    json_decref(p);
    return NULL;
}

int hv_engine_result_init(struct hv_engine_result *r)
{
    r->metrics = json_array();
    r->samples = json_array();
    r->observed = json_object();
    r->raw = NULL;
    r->raw_of = 0;
    r->error[0] = '\0';
    return r->metrics && r->samples && r->observed ? 0 : -1;
}

void hv_engine_result_clear(struct hv_engine_result *r)
{
    json_decref(r->metrics);
    json_decref(r->samples);
    json_decref(r->observed);
    free(r->raw);
    r->metrics = r->samples = r->observed = NULL;
    r->raw = NULL;
    r->raw_of = 0;
    r->error[0] = '\0';
}

int hv_engine_set_raw(struct hv_engine_result *r, const char *text, size_t len)
{
    return hv_engine_set_raw_of(r, text, len, len);
}

int hv_engine_set_raw_of(struct hv_engine_result *r, const char *text, size_t len, size_t total)
{
    if (len > HV_ENGINE_RAW_MAX) {
        len = HV_ENGINE_RAW_MAX;
        while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
            len--; /* do not split a UTF-8 sequence */
    }
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] != '\0')
            copy[n++] = text[i];
    copy[n] = '\0';
    free(r->raw);
    r->raw = copy;
    r->raw_of = total > len ? total : 0;
    return 0;
}

int hv_engine_add_metric(struct hv_engine_result *r, const char *name, double value,
                         const char *unit, bool higher_is_better)
{
    if (!isfinite(value))
        return -1;
    json_t *m = json_pack("{s:s, s:f, s:s, s:b}", "name", name, "value", value, "unit", unit,
                          "higher_is_better", higher_is_better);
    return m != NULL ? json_array_append_new(r->metrics, m) : -1;
}

int hv_engine_emit_sample(const struct hv_engine_ctx *ctx, struct hv_engine_result *r,
                          const char *metric, double t, double value)
{
    if (!isfinite(value) || !isfinite(t))
        return -1;
    json_t *s = json_pack("{s:s, s:f, s:f}", "metric", metric, "t", t, "value", value);
    if (s == NULL || json_array_append_new(r->samples, s) != 0)
        return -1;
    if (ctx != NULL && ctx->on_sample != NULL)
        ctx->on_sample(ctx->sample_arg, metric, t, value);
    return 0;
}

int hv_engine_fail(struct hv_engine_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    return -1;
}

bool hv_engine_stopping(const struct hv_engine_ctx *ctx)
{
    /* An atomic load: the flag is written by another thread. */
    return ctx->stop != NULL && __atomic_load_n(ctx->stop, __ATOMIC_RELAXED) != 0;
}

void hv_steady_state(const double *v, size_t n, struct hv_steady *out)
{
    const int w = HV_STEADY_WINDOW;
    *out = (struct hv_steady){.steady = false, .window = w, .range_pct = NAN, .slope_pct = NAN};
    if (n < (size_t)w)
        return;
    const double *y = v + n - (size_t)w;
    double mean = 0, lo = y[0], hi = y[0];
    for (int i = 0; i < w; i++) {
        mean += y[i];
        lo = y[i] < lo ? y[i] : lo;
        hi = y[i] > hi ? y[i] : hi;
    }
    mean /= w;
    if (!(mean > 0))
        return;
    /* Least squares over x = 0..w-1. */
    double xm = (w - 1) / 2.0, sxy = 0, sxx = 0;
    for (int i = 0; i < w; i++) {
        sxy += (i - xm) * (y[i] - mean);
        sxx += (i - xm) * (i - xm);
    }
    out->range_pct = 100.0 * (hi - lo) / mean;
    out->slope_pct = 100.0 * fabs(sxy / sxx) * (w - 1) / mean;
    out->steady = out->range_pct <= 20.0 && out->slope_pct <= 10.0;
}

int hv_steady_observe(json_t *obj, const struct hv_steady *st)
{
    int rc = json_object_set_new(obj, "steady", json_boolean(st->steady));
    rc |= json_object_set_new(obj, "window", json_integer(st->window));
    rc |= json_object_set_new(obj, "range_pct",
                              isfinite(st->range_pct) ? json_real(st->range_pct) : json_null());
    rc |= json_object_set_new(obj, "slope_pct",
                              isfinite(st->slope_pct) ? json_real(st->slope_pct) : json_null());
    return rc == 0 ? 0 : -1;
}

json_t *hv_engine_result_to_json(const struct hv_engine_result *r, int attempt, bool ok,
                                 const char *started_at, const char *finished_at)
{
    json_t *body =
        json_pack("{s:i, s:s, s:s, s:s}", "attempt", attempt, "status", ok ? "ok" : "error",
                  "started_at", started_at, "finished_at", finished_at);
    if (body == NULL)
        return NULL;
    int rc = 0;
    rc |= json_object_set_new(body, "metrics",
                              ok && r->metrics ? json_deep_copy(r->metrics) : json_array());
    rc |= json_object_set_new(body, "samples",
                              ok && r->samples ? json_deep_copy(r->samples) : json_array());
    rc |= json_object_set_new(body, "observed",
                              r->observed ? json_deep_copy(r->observed) : json_object());
    if (r->raw != NULL) {
        /* json_stringn refuses invalid UTF-8: keep what is valid. */
        json_t *raw = json_string(r->raw);
        if (raw == NULL) {
            char *clean = strdup(r->raw);
            if (clean != NULL) {
                for (char *p = clean; *p != '\0'; p++)
                    if ((unsigned char)*p >= 0x80)
                        *p = '?';
                raw = json_string(clean);
                free(clean);
            }
        }
        /* A cut output says so; the upload adds the marker (deliver.h). */
        if (raw != NULL && r->raw_of > 0)
            rc |= json_object_set_new(json_object_get(body, "observed"), "raw_truncated",
                                      json_pack("{s:I, s:I}", "kept_bytes",
                                                (json_int_t)json_string_length(raw), "of_bytes",
                                                (json_int_t)r->raw_of));
        if (raw != NULL)
            rc |= json_object_set_new(body, "raw", raw);
    }
    if (!ok)
        rc |= json_object_set_new(body, "error",
                                  json_string(r->error[0] ? r->error : "engine failed"));
    if (rc != 0) {
        json_decref(body);
        return NULL;
    }
    return body;
}
