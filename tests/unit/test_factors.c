/* test_factors.c — the catalogue of tuning factors: every row well formed,
 * levels accepted, normalised and refused as documented, the API's JSON
 * complete, and docs/catalog.md and the examples in step with the table. */
#include "factors.h"

#include "check.h"

#include <glob.h>
#include <stdbool.h>

static bool is_name(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* Level cases: factor, the level as JSON, the normalised text or NULL when
 * it must be refused, and a piece of the error message when refused. */
static const struct {
    const char *factor;
    const char *level;
    const char *want;
    const char *msg;
} cases[] = {
    {"vcpu_pin", "\"on\"", "on", NULL},
    {"vcpu_pin", "\"OFF\"", "off", NULL},
    {"vcpu_pin", "true", NULL, "one of: off, on"},
    {"vcpu_pin", "\"yes\"", NULL, "one of: off, on"},
    {"vcpu_pin", "1", NULL, "one of: off, on"},
    {"disk_cache", "\"writeback\"", "writeback", NULL},
    {"disk_cache", "\"write-back\"", NULL, "none, writeback, writethrough, directsync, unsafe"},
    {"hugepages", "\"1G\"", "1g", NULL},
    {"cpu_mode", "\"host-model\"", "host-model", NULL},
    {"io_scheduler", "\"deadline\"", NULL, "none, mq-deadline, bfq, kyber"},
    {"numa_tune", "[\"strict\"]", NULL, "must be a string"},
    {"thp", "null", NULL, "always, madvise, never"},
    {"kvm_ept", "\"off\"", "off", NULL},
    {"halt_poll_ns", "200000", "200000", NULL},
    {"halt_poll_ns", "\"200000\"", "200000", NULL},
    {"halt_poll_ns", "\"200us\"", "200000", NULL},
    {"halt_poll_ns", "\"0.5ms\"", "500000", NULL},
    {"halt_poll_ns", "\"10ms\"", "10000000", NULL},
    {"halt_poll_ns", "\"0\"", "0", NULL},
    {"halt_poll_ns", "\"11ms\"", NULL, "between 0 and 10000000"},
    {"halt_poll_ns", "-1", NULL, "between 0 and 10000000"},
    {"halt_poll_ns", "1.5", NULL, "whole number of ns"},
    {"halt_poll_ns", "\"1.5ns\"", NULL, "whole number of ns"},
    {"halt_poll_ns", "\"1e5\"", NULL, "suffix ns, us, ms, s"},
    {"halt_poll_ns", "\" 100\"", NULL, "ns"},
    {"halt_poll_ns", "\"-100\"", NULL, "ns"},
    {"halt_poll_ns", "false", NULL, "ns"},
    {"readahead_kb", "\"128\"", "128", NULL},
    {"readahead_kb", "\"4m\"", "4096", NULL},
    {"readahead_kb", "\"64MiB\"", "65536", NULL},
    {"readahead_kb", "\"65m\"", NULL, "between 0 and 65536"},
    {"readahead_kb", "\"0x10\"", NULL, "KiB"},
    {"guest_mtu", "9000", "9000", NULL},
    {"guest_mtu", "\"1500\"", "1500", NULL},
    {"guest_mtu", "\"9k\"", NULL, "such as \"1500\""},
    {"guest_mtu", "9001", NULL, "between 576 and 9000"},
    {"guest_mtu", "575", NULL, "between 576 and 9000"},
    {"nic_mtu", "9216", "9216", NULL},
    {"iothreads", "0", "0", NULL},
    {"iothreads", "17", NULL, "between 0 and 16"},
    {"net_queues", "\"8\"", "8", NULL},
    {"net_queues", "0", NULL, "between 1 and 64"},
    {"blkio_iops", "0", "0", NULL},
    {"blkio_iops", "10000001", NULL, "between 0 and 10000000"},
};

int main(void)
{
    const size_t n = hv_factor_count();
    CHECK(n == 23);

    /* Every row is well formed. */
    for (size_t i = 0; i < n; i++) {
        const struct hv_factor_def *f = hv_factor_at(i);
        CHECK(f != NULL && is_name(f->name));
        CHECK(hv_factor_find(f->name) == f);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(hv_factor_at(j)->name, f->name) != 0);
        CHECK(f->summary != NULL && f->summary[0] != '\0');
        CHECK(f->apply_hint != NULL && f->apply_hint[0] != '\0');
        CHECK(strcmp(hv_disruption_name(f->disruption), "unknown") != 0);
        CHECK(strcmp(hv_factor_scope_name(f->scope), "unknown") != 0);
        if (f->levels != NULL) {
            /* Enumerated: at least two distinct, lower-case levels, no range. */
            size_t k = 0;
            for (; f->levels[k] != NULL; k++) {
                for (const char *c = f->levels[k]; *c; c++)
                    CHECK(!(*c >= 'A' && *c <= 'Z'));
                for (size_t m = 0; m < k; m++)
                    CHECK(strcmp(f->levels[m], f->levels[k]) != 0);
            }
            CHECK(k >= 2);
            CHECK(f->min == 0 && f->max == 0 && f->unit == NULL);
        } else {
            CHECK(f->min < f->max);
            CHECK(f->unit != NULL && f->unit[0] != '\0');
        }
        /* The stock setting is a level, already in its normal form. */
        char out[64], err[256] = "";
        json_t *def = json_string(f->system_default);
        int rc = hv_factor_level(f, def, out, sizeof out, err, sizeof err);
        CHECK_MSG(rc == 0, "%s: system_default: %s", f->name, err);
        if (rc == 0)
            CHECK_STR(out, f->system_default);
        json_decref(def);
    }
    CHECK(hv_factor_at(n) == NULL);
    CHECK(hv_factor_find("warp_drive") == NULL);
    CHECK(hv_factor_find(NULL) == NULL);

    /* The disruption classes and scopes the API names. */
    CHECK(hv_factor_find("vcpu_pin")->disruption == HV_DISRUPT_LIVE);
    CHECK(hv_factor_find("disk_cache")->disruption == HV_DISRUPT_RESTART);
    CHECK(hv_factor_find("halt_poll_ns")->disruption == HV_DISRUPT_HOST);
    CHECK(hv_factor_find("kvm_ept")->disruption == HV_DISRUPT_REBOOT);
    CHECK(hv_factor_find("kvm_npt")->scope == HV_SCOPE_HOST);
    CHECK(hv_factor_find("iothreads")->scope == HV_SCOPE_GUEST);
    CHECK(hv_factor_find("disk_cache")->risk != NULL &&
          strstr(hv_factor_find("disk_cache")->risk, "host crash") != NULL);
    CHECK(strstr(hv_factor_find("vcpu_pin")->apply_hint, "virsh vcpupin") != NULL);
    CHECK_STR(hv_disruption_name(HV_DISRUPT_LIVE), "live");
    CHECK_STR(hv_disruption_name(HV_DISRUPT_RESTART), "restart");
    CHECK_STR(hv_disruption_name(HV_DISRUPT_HOST), "host");
    CHECK_STR(hv_disruption_name(HV_DISRUPT_REBOOT), "reboot");
    CHECK_STR(hv_disruption_name((enum hv_disruption)42), "unknown");

    /* Levels: accepted and normalised, or refused with a useful message. */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct hv_factor_def *f = hv_factor_find(cases[i].factor);
        CHECK(f != NULL);
        if (f == NULL)
            continue;
        json_t *level = check_json(cases[i].level);
        char out[64] = "", err[512] = "";
        int rc = hv_factor_level(f, level, out, sizeof out, err, sizeof err);
        if (cases[i].want != NULL) {
            CHECK_MSG(rc == 0, "case %zu (%s %s): %s", i, cases[i].factor, cases[i].level, err);
            CHECK_MSG(strcmp(out, cases[i].want) == 0, "case %zu (%s %s): \"%s\", expected \"%s\"",
                      i, cases[i].factor, cases[i].level, out, cases[i].want);
        } else {
            CHECK_MSG(rc == -1, "case %zu (%s %s): rc %d, error \"%s\"", i, cases[i].factor,
                      cases[i].level, rc, err);
            CHECK_MSG(strstr(err, cases[i].msg) != NULL, "case %zu (%s %s): error \"%s\"", i,
                      cases[i].factor, cases[i].level, err);
        }
        json_decref(level);
    }

    /* A level that does not fit the caller's buffer is refused, not cut. */
    char small[4], err[128];
    json_t *wt = json_string("writethrough");
    CHECK(hv_factor_level(hv_factor_find("disk_cache"), wt, small, sizeof small, err, sizeof err) ==
          -1);
    json_decref(wt);
    /* err may be NULL. */
    json_t *bad = json_string("maybe");
    CHECK(hv_factor_level(hv_factor_find("ksm"), bad, small, sizeof small, NULL, 0) == -1);
    json_decref(bad);

    /* The API's view: every factor, in order, with its levels or range. */
    json_t *list = hv_factors_json();
    CHECK(json_is_array(list) && json_array_size(list) == n);
    for (size_t i = 0; i < json_array_size(list); i++) {
        const struct hv_factor_def *f = hv_factor_at(i);
        json_t *o = json_array_get(list, i);
        CHECK_STR(json_string_value(json_object_get(o, "name")), f->name);
        CHECK_STR(json_string_value(json_object_get(o, "disruption")),
                  hv_disruption_name(f->disruption));
        CHECK_STR(json_string_value(json_object_get(o, "scope")), hv_factor_scope_name(f->scope));
        CHECK_STR(json_string_value(json_object_get(o, "system_default")), f->system_default);
        CHECK_STR(json_string_value(json_object_get(o, "apply")), f->apply_hint);
        CHECK(f->risk ? json_is_string(json_object_get(o, "risk"))
                      : json_is_null(json_object_get(o, "risk")));
        if (f->levels != NULL) {
            CHECK_STR(json_string_value(json_object_get(o, "type")), "enum");
            json_t *levels = json_object_get(o, "levels");
            size_t k = 0;
            for (; f->levels[k] != NULL; k++)
                CHECK_STR(json_string_value(json_array_get(levels, k)), f->levels[k]);
            CHECK(json_array_size(levels) == k);
        } else {
            CHECK_STR(json_string_value(json_object_get(o, "type")), "int");
            CHECK(json_integer_value(json_object_get(o, "min")) == (json_int_t)f->min);
            CHECK(json_integer_value(json_object_get(o, "max")) == (json_int_t)f->max);
            CHECK_STR(json_string_value(json_object_get(o, "unit")), f->unit);
        }
    }
    json_decref(list);

    /* docs/catalog.md has a row for every factor, so the page cannot
     * silently miss one. */
    char *doc = check_slurp("docs/catalog.md");
    CHECK(doc != NULL);
    for (size_t i = 0; doc != NULL && i < n; i++) {
        char row[64];
        snprintf(row, sizeof row, "| `%s` |", hv_factor_at(i)->name);
        CHECK_MSG(strstr(doc, row) != NULL, "docs/catalog.md has no row %s", row);
    }
    free(doc);

    /* Every factor level in the examples is one the catalogue allows. */
    glob_t g;
    CHECK(glob("examples/*.json", 0, NULL, &g) == 0 && g.gl_pathc >= 4);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        json_error_t jerr;
        json_t *plan = json_load_file(g.gl_pathv[i], JSON_REJECT_DUPLICATES, &jerr);
        CHECK_MSG(plan != NULL, "%s: %s", g.gl_pathv[i], jerr.text);
        const char *name;
        json_t *levels;
        json_object_foreach(json_object_get(plan, "factors"), name, levels)
        {
            const struct hv_factor_def *f = hv_factor_find(name);
            CHECK(f != NULL);
            CHECK(json_array_size(levels) >= 2);
            size_t k;
            json_t *level;
            json_array_foreach(levels, k, level)
            {
                char out[64], msg[256] = "";
                int rc = f ? hv_factor_level(f, level, out, sizeof out, msg, sizeof msg) : -1;
                CHECK_MSG(rc == 0, "%s: /factors/%s/%zu: %s", g.gl_pathv[i], name, k, msg);
            }
        }
        json_decref(plan);
    }
    globfree(&g);

    /* Host settings as a host worker reports them: host factors of the
     * catalogue, a level each; everything else under its path. */
    json_t *ok = json_pack("{s:s,s:s,s:s}", "thp", "never", "ksm", "off", "readahead_kb", "4096");
    json_t *errors = json_array();
    hv_factor_settings_check(ok, "/settings", errors);
    CHECK(json_array_size(errors) == 0);
    json_t *wrong =
        json_pack("{s:s,s:s,s:i,s:s}", "vcpu_pin", "on", "nope", "x", "thp", 3, "ksm", "");
    hv_factor_settings_check(wrong, "/settings", errors);
    CHECK(json_array_size(errors) == 4);
    const char *want[] = {"/settings/vcpu_pin", "/settings/nope", "/settings/thp", "/settings/ksm"};
    for (size_t k = 0; k < 4; k++) {
        const char *path = json_string_value(json_object_get(json_array_get(errors, k), "path"));
        CHECK_MSG(path != NULL && strcmp(path, want[k]) == 0, "error %zu: %s", k,
                  path ? path : "(none)");
    }
    json_decref(ok);
    json_decref(wrong);
    json_decref(errors);

    return check_summary("test_factors");
}
