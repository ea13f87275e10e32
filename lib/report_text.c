/* report_text.c — the number formats and labels of report sentences; see
 * report_render.h. */
#include "report_render.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Trailing name parts that only repeat the unit. */
static const char *const unit_parts[] = {"mbps", "gbps", "kbps", "mib_s", "mb_s", "gb_s", NULL};

char *hv_metric_label(const char *metric, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    const char *end = metric + strlen(metric);
    const char *dot = strrchr(metric, '.');
    for (const char *const *u = unit_parts; dot != NULL && *u != NULL; u++)
        if (strcmp(dot + 1, *u) == 0)
            end = dot;
    size_t n = 0;
    for (const char *p = metric; p < end && n + 1 < len; p++)
        buf[n++] = *p == '.' ? ' ' : *p == '_' ? '-' : *p;
    buf[n] = '\0';
    return buf;
}

int hv_change_decimals(double pct, double lo, double hi)
{
    double m = fmax(fabs(pct), fmax(isfinite(lo) ? fabs(lo) : 0.0, isfinite(hi) ? fabs(hi) : 0.0));
    return m < 1.0 ? 2 : 1;
}

/* A signed number with a real minus (U+2212); 0 when it rounds to 0. */
static char *signed_num(char *buf, size_t len, double v, int decimals)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "-");
        return buf;
    }
    double unit = pow(10.0, -decimals) / 2.0;
    if (fabs(v) < unit)
        snprintf(buf, len, "%.*f", decimals, 0.0);
    else if (v < 0)
        snprintf(buf, len, "\xe2\x88\x92%.*f", decimals, -v);
    else
        snprintf(buf, len, "+%.*f", decimals, v);
    return buf;
}

char *hv_fmt_change(char *buf, size_t len, double pct, int decimals)
{
    char num[48];
    if (!isfinite(pct))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%s %%", signed_num(num, sizeof num, pct, decimals));
    return buf;
}

char *hv_fmt_change_interval(char *buf, size_t len, double lo, double hi, int decimals)
{
    char a[48], b[48];
    snprintf(buf, len, "[%s, %s]", signed_num(a, sizeof a, lo, decimals),
             signed_num(b, sizeof b, hi, decimals));
    return buf;
}

char *hv_fmt_value(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.4g", v);
    return buf;
}

/* A number member of o, NaN when absent. */
static double member(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

void hv_summary_figures(const json_t *s, double *center, double *lo, double *hi, const char **note)
{
    /* A compare side has its interval's figures in itself. */
    const json_t *iv = json_object_get(s, "interval");
    if (iv == NULL && json_object_get(s, "scale") != NULL)
        iv = json_is_number(json_object_get(s, "lo")) ? s : NULL;
    bool has = json_is_object(iv) && json_is_number(json_object_get(iv, "lo")) &&
               json_is_number(json_object_get(iv, "hi"));
    const json_t *u = json_object_get(s, "usable");
    bool usable = json_is_boolean(u) ? json_is_true(u) && has : has;
    double c = has ? member(iv, "center") : NAN;
    *center = isfinite(c) ? c : member(s, "mean");
    *lo = usable ? member(iv, "lo") : NAN;
    *hi = usable ? member(iv, "hi") : NAN;
    if (note != NULL) {
        const char *t = json_string_value(json_object_get(s, "interval_note"));
        *note = usable ? NULL : t != NULL ? t : "no interval";
    }
}

const char *hv_change_bounds(const json_t *o, const char *lo_key, const char *hi_key, double *lo,
                             double *hi)
{
    double l = member(o, lo_key), h = member(o, hi_key);
    bool has = isfinite(l) && isfinite(h);
    const json_t *u = json_object_get(o, "usable");
    bool usable = json_is_boolean(u) ? json_is_true(u) && has : has;
    *lo = usable ? l : NAN;
    *hi = usable ? h : NAN;
    if (usable)
        return NULL;
    const char *t = json_string_value(json_object_get(o, "interval_note"));
    return t != NULL ? t : "no interval";
}
