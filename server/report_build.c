/* report_build.c — a plan's report as a whole; see report.h. */
#include "report.h"
#include "report_int.h"
#include "report_render.h"

#include <stdio.h>
#include <string.h>

/* The plan's factors: [{"name", "default", "levels"}]. */
static json_t *factors_json(const struct hv_rdata *d)
{
    json_t *list = json_array();
    for (size_t f = 0; f < d->n_factors; f++) {
        json_t *levels = json_array();
        for (size_t l = 0; l < d->factors[f].n_levels; l++)
            json_array_append_new(levels, json_string(d->factors[f].levels[l]));
        json_array_append_new(list,
                              json_pack("{s:s,s:s,s:o}", "name", d->factors[f].name, "default",
                                        d->factors[f].levels[0], "levels", levels));
    }
    return list;
}

/* The report's head: the plan and the settings the figures depend on;
 * as_of is the last change of state of the plan's jobs the figures include
 * (the summary's updated_at). */
static json_t *head_json(const struct hv_rdata *d)
{
    json_t *s = d->summary;
    json_t *weights = json_object();
    for (int i = 0; i < HV_SUB_COUNT; i++)
        json_object_set_new(weights, hv_subsys_name((enum hv_subsys)i), json_real(d->weights[i]));
    return json_pack("{s:O,s:O,s:O,s:O,s:O?,s:b,s:s,s:s,s:f,s:o,s:o,s:f}", "plan_id",
                     json_object_get(s, "id"), "name", json_object_get(s, "name"), "status",
                     json_object_get(s, "status"), "jobs", json_object_get(s, "jobs"), "as_of",
                     json_object_get(s, "updated_at"), "partial", !d->finished, "design",
                     d->full ? "full" : "one-at-a-time", "baseline", d->baseline, "margin_pct",
                     d->margin_pct, "weights", weights, "factors", factors_json(d), "confidence",
                     0.95);
}

/* What the host's KVM probe found, as the end of the emulated warning: ""
 * when the host's facts hold no answer. */
static void probe_words(const struct hv_rdata *d, char *buf, size_t len)
{
    const json_t *p = json_object_get(d->host_view, "kvm_probe");
    const char *answer = json_string_value(json_object_get(p, "answer"));
    const char *why = json_string_value(json_object_get(p, "why"));
    const char *at = json_string_value(json_object_get(p, "probed_at"));
    const char *host = json_string_value(json_object_get(d->host_view, "host"));
    buf[0] = '\0';
    if (answer == NULL || why == NULL)
        return;
    if (strcmp(answer, "tcg") == 0)
        snprintf(buf, len, ". The KVM probe of %s found KVM unusable there: %s (probed %s)",
                 host != NULL ? host : "the host", why, at != NULL ? at : "at an unknown time");
    else
        snprintf(buf, len,
                 ". The KVM probe of %s found KVM usable there (%s, probed %s): with domain "
                 "type kvm the guests would measure hardware virtualization",
                 host != NULL ? host : "the host", why, at != NULL ? at : "at an unknown time");
    if (!json_is_true(json_object_get(p, "current"))) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used,
                 "; the answer was probed on another kernel or /dev/kvm, so probe again "
                 "(deploy/guest-image/probe-kvm.sh --force)");
    }
}

/* One warning per configuration whose jobs ran while the host was busy
 * with other work (a guest job's host telemetry's host_busy, a bare-metal
 * job's own observed.interference), naming the jobs and the most the other
 * work took; other domains only when a guest job's telemetry counted them. */
static void busy_warnings(struct hv_rctx *c, const struct hv_rdata *d)
{
    const json_t *busy = json_object_get(d->host_view, "busy");
    const char *host = json_string_value(json_object_get(d->host_view, "host"));
    const char *noise = json_string_value(json_object_get(d->host_view, "noise"));
    bool repeat = noise != NULL && strcmp(noise, "repeat") == 0;
    size_t n = json_array_size(busy);
    for (size_t i = 0, k; i < n; i += k) {
        const char *config =
            json_string_value(json_object_get(json_array_get(busy, i), "configuration"));
        char jobs[400] = "";
        double others = 0, steal = 0, own = 0;
        bool domains = false;
        size_t listed = 0;
        for (k = 0; i + k < n; k++) {
            const json_t *b = json_array_get(busy, i + k);
            const char *cf = json_string_value(json_object_get(b, "configuration"));
            if (k > 0 && (cf == NULL || config == NULL || strcmp(cf, config) != 0))
                break;
            size_t used = strlen(jobs);
            if (used + 80 < sizeof jobs) {
                const char *target = json_string_value(json_object_get(b, "target"));
                snprintf(jobs + used, sizeof jobs - used, "%s%lld (%s)", k > 0 ? ", " : "",
                         (long long)json_integer_value(json_object_get(b, "job_id")),
                         target != NULL ? target : "?");
                listed++;
            }
            domains = domains || json_is_number(json_object_get(b, "others_cpu_pct"));
            double v = json_number_value(json_object_get(b, "others_cpu_pct"));
            others = v > others ? v : others;
            v = json_number_value(json_object_get(b, "steal_pct"));
            steal = v > steal ? v : steal;
            v = json_number_value(json_object_get(b, "nonguest_cpu_pct"));
            own = v > own ? v : own;
        }
        char more[32] = "";
        if (listed < k)
            snprintf(more, sizeof more, " and %zu more", k - listed);
        char doms[64] = "";
        if (domains)
            snprintf(doms, sizeof doms, "other domains up to %.1f %% of a CPU, ", others);
        hv_rwarn(c, "host_busy",
                 "configuration %s: %zu job%s ran while %s was busy with other work (job%s %s%s; "
                 "%ssteal up to %.1f %%, the host's own work up to %.1f %% of a CPU): their "
                 "values carry that work's noise%s",
                 config != NULL ? config : "?", k, k == 1 ? "" : "s",
                 host != NULL ? host : "the host", k == 1 ? "" : "s", jobs, more, doms, steal, own,
                 repeat ? " (kept although the plan repeats noisy jobs: the last job its round "
                          "allowed, one that ran with others, or one whose host telemetry came "
                          "after its result)"
                        : "");
    }
}

/* The jobs set aside as noisy (migrations/052): the report's set_aside
 * member, a copy of the host view's, and one warning saying how many and
 * why. Their values are in no figure (hv_round_parts leaves them out). */
static int set_aside(struct hv_rctx *c, const struct hv_rdata *d, json_t *report)
{
    const json_t *sa = json_object_get(d->host_view, "set_aside");
    json_int_t n = json_integer_value(json_object_get(sa, "count"));
    if (!json_is_object(sa))
        return 0;
    if (n > 0) {
        char why[200] = "";
        const char *reason;
        const json_t *count;
        json_object_foreach((json_t *)json_object_get(sa, "reasons"), reason, count)
        {
            size_t used = strlen(why);
            snprintf(why + used, sizeof why - used, "%s%lld %s", used > 0 ? ", " : "",
                     (long long)json_integer_value(count), reason);
        }
        hv_rwarn(c, "set_aside",
                 "%lld job%s ran beside other work and %s set aside (%s): %s in no figure, and "
                 "%s configuration ran again in the same round",
                 (long long)n, n == 1 ? "" : "s", n == 1 ? "was" : "were", why,
                 n == 1 ? "its values are" : "their values are", n == 1 ? "its" : "each one's");
    }
    return json_object_set_new(report, "set_aside", json_deep_copy(sa));
}

/* Sets key of report to v (stolen); a NULL v (memory ran out) fails. */
static int put(json_t *report, const char *key, json_t *v)
{
    return v != NULL ? json_object_set_new(report, key, v) : -1;
}

/* The sections of the report, in the order they depend on each other:
 * recommendations read the comparisons' family verdicts. */
static int sections(struct hv_rctx *c, json_t *report, json_t **digest)
{
    json_t *rows = NULL, *family = NULL, *efficiency = NULL, *ignore = NULL;
    size_t first_warning = json_array_size(c->warnings);
    int rc = put(report, "summaries", hv_rsummaries(c, &rows));
    rc |= put(report, "rows", rows);
    if (rc == 0 && digest != NULL)
        *digest = hv_rdigest(c, json_object_get(report, "summaries"), rows, first_warning);
    rc |= put(report, "comparisons", hv_rcompare(c, &family));
    rc |= put(report, "family", family);
    rc |= put(report, "interactions", hv_rinteractions(c));
    rc |= put(report, "overhead", hv_roverhead(c, &efficiency));
    rc |= put(report, "efficiency", efficiency);
    rc |= put(report, "repetitions", hv_rrepetitions(c, json_object_get(report, "summaries")));
    rc |= put(report, "recommendations", hv_rrecommend(c, &ignore));
    rc |= put(report, "safe_to_ignore", ignore);
    return rc;
}

json_t *hv_report_build(const struct hv_rdata *d)
{
    return hv_report_build_digest(d, NULL);
}

json_t *hv_report_build_digest(const struct hv_rdata *d, json_t **digest)
{
    if (digest != NULL)
        *digest = NULL;
    if (!hv_rdigest_wanted(d))
        digest = NULL;
    struct hv_rctx c = {.d = d, .warnings = json_array()};
    json_t *report = head_json(d);
    if (report == NULL || c.warnings == NULL || hv_rarms_build(&c) != 0) {
        json_decref(report);
        hv_rctx_free(&c);
        return NULL;
    }
    if (!d->finished) {
        const char *status = json_string_value(json_object_get(d->summary, "status"));
        hv_rwarn(&c, "partial", "the plan is %s: these figures are of the results so far",
                 status != NULL ? status : "not finished");
    }
    if (json_array_size(d->emulated) > 0) {
        char names[512] = "";
        size_t i;
        const json_t *n;
        json_array_foreach(d->emulated, i, n)
        {
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s", i > 0 ? ", " : "",
                     json_string_value(n));
        }
        char probe[700];
        probe_words(d, probe, sizeof probe);
        hv_rwarn(
            &c, "emulated",
            "%s ran under QEMU's TCG emulation (domain type qemu), not KVM: the guests' figures "
            "and their overhead against the host measure emulation, not hardware "
            "virtualization%s",
            names, probe);
    }
    busy_warnings(&c, d);
    int rc = set_aside(&c, d, report);
    rc |= sections(&c, report, digest);
    rc |= json_object_set(report, "warnings", c.warnings);
    hv_rctx_free(&c);
    /* Read from the finished document, as hvbench report reads it. */
    if (rc == 0) {
        rc |= put(report, "decided", hv_report_decided_json(report));
        rc |= put(report, "answer", hv_report_lead(report));
    }
    if (rc != 0) {
        json_decref(report);
        if (digest != NULL) {
            json_decref(*digest);
            *digest = NULL;
        }
        return NULL;
    }
    return report;
}
