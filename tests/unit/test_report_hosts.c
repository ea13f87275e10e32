/* test_report_hosts.c — server/report_hosts.c: a fleet plan's per-host
 * view. Each host against the fleet's median with its interval; an outlier
 * only when its whole ratio interval lies past the margin, named with the
 * facts in which it differs from the most common value; a host of one
 * round (no interval) never is one. Plus lib/plan_fleet.c's selector
 * check and child plans. */
#include <math.h>
#include <string.h>

#include "plan_fleet.h"
#include "server/report_hosts.h"
#include "tests/unit/check.h"

/* A row of one host's values for workload c, metric m. */
static json_t *row(const char *host, const char *values)
{
    char text[256];
    snprintf(text, sizeof text,
             "{\"host\":\"%s\",\"workload\":\"c\",\"metric\":\"m\",\"unit\":\"ops/s\","
             "\"higher_is_better\":true,\"kind\":\"site\",\"engine\":\"x\",\"values\":%s}",
             host, values);
    return check_json(text);
}

static json_t *host(const char *name, long id, const char *kernel)
{
    char text[256];
    snprintf(text, sizeof text,
             "{\"host\":\"%s\",\"plan_id\":%ld,\"facts\":{\"kernel\":\"%s\",\"thp\":\"never\"}}",
             name, id, kernel);
    return check_json(text);
}

/* The host entry of name in the view's only series. */
static const json_t *fig(const json_t *view, const char *name)
{
    const json_t *hosts =
        json_object_get(json_array_get(json_object_get(view, "series"), 0), "hosts");
    for (size_t i = 0; i < json_array_size(hosts); i++)
        if (strcmp(json_string_value(json_object_get(json_array_get(hosts, i), "host")), name) == 0)
            return json_array_get(hosts, i);
    return NULL;
}

static void test_view(void)
{
    json_t *rows = json_array(), *hosts = json_array();
    json_array_append_new(rows, row("a", "[100,101,99]"));
    json_array_append_new(rows, row("b", "[102,100,101]"));
    json_array_append_new(rows, row("c", "[98,99,100]"));
    json_array_append_new(rows, row("d", "[50,51,49]"));  /* slow, narrow: an outlier */
    json_array_append_new(rows, row("e", "[30,200,90]")); /* far but wide: not one */
    json_array_append_new(rows, row("f", "[300]"));       /* one round: no interval */
    const char *names[] = {"a", "b", "c", "d", "e", "f"};
    for (size_t i = 0; i < 6; i++)
        json_array_append_new(
            hosts, host(names[i], (long)i + 10, strcmp(names[i], "d") == 0 ? "6.8" : "6.1"));
    json_t *view = hv_report_hosts_build(rows, hosts, 5);
    CHECK(view != NULL);
    const json_t *s = json_array_get(json_object_get(view, "series"), 0);
    CHECK_STR(json_string_value(json_object_get(s, "metric")), "m");
    CHECK((json_array_size(json_object_get(s, "hosts"))) == 6);
    /* The median of the six centres lies between b's and a's or c's. */
    double med = json_number_value(json_object_get(s, "median"));
    CHECK(med > 95 && med < 101);
    CHECK(json_is_true(json_object_get(fig(view, "d"), "outlier")));
    CHECK(json_is_false(json_object_get(fig(view, "e"), "outlier")));
    CHECK(json_is_false(json_object_get(fig(view, "f"), "outlier")));
    CHECK(json_is_null(json_object_get(fig(view, "f"), "lo")));
    CHECK(json_is_false(json_object_get(fig(view, "a"), "outlier")));
    /* Usable: d's narrow interval; e's past ±100 % of the median and f's
     * single round are words instead, and name no outlier. */
    CHECK(json_is_true(json_object_get(fig(view, "d"), "usable")));
    CHECK(json_is_null(json_object_get(fig(view, "d"), "interval_note")));
    CHECK(json_is_false(json_object_get(fig(view, "e"), "usable")));
    CHECK_STR(json_string_value(json_object_get(fig(view, "e"), "interval_note")),
              "n = 3: the interval is too wide to use");
    CHECK_STR(json_string_value(json_object_get(fig(view, "f"), "interval_note")),
              "n = 1: too few rounds for an interval");
    CHECK_NEAR(json_number_value(json_object_get(fig(view, "d"), "ratio")) * med,
               json_number_value(json_object_get(fig(view, "d"), "mean")), 1e-9);
    const json_t *outliers = json_object_get(view, "outliers");
    CHECK((json_array_size(outliers)) == 1);
    const json_t *o = json_array_get(outliers, 0);
    CHECK_STR(json_string_value(json_object_get(o, "host")), "d");
    CHECK(json_integer_value(json_object_get(o, "plan_id")) == 13);
    CHECK_STR(
        json_string_value(json_object_get(json_array_get(json_object_get(o, "series"), 0), "side")),
        "below");
    char *differs = json_dumps(json_object_get(o, "differs"), JSON_COMPACT | JSON_SORT_KEYS);
    CHECK_STR(differs, "[{\"fact\":\"kernel\",\"typical\":\"6.1\",\"value\":\"6.8\"}]");
    free(differs);
    json_decref(view);

    /* A wider margin keeps d in. */
    view = hv_report_hosts_build(rows, hosts, 50);
    CHECK((json_array_size(json_object_get(view, "outliers"))) == 0);
    json_decref(view);
    json_decref(rows);
    json_decref(hosts);
}

/* Two rounds a host: every ratio's interval is words, none an outlier,
 * however far; a rate (ops/s) with a zero value has its linear interval
 * start at 0, never below. */
static void test_two_rounds(void)
{
    json_t *rows = json_array(), *hosts = json_array();
    json_array_append_new(rows, row("a", "[100,101]"));
    json_array_append_new(rows, row("b", "[99,100]"));
    json_array_append_new(rows, row("c", "[10,10.1]"));
    json_array_append_new(rows, row("z", "[0,100]"));
    const char *names[] = {"a", "b", "c", "z"};
    for (size_t i = 0; i < 4; i++)
        json_array_append_new(hosts, host(names[i], (long)i + 10, "6.1"));
    json_t *view = hv_report_hosts_build(rows, hosts, 5);
    CHECK(view != NULL);
    for (size_t i = 0; i < 4; i++) {
        const json_t *h = fig(view, names[i]);
        CHECK(json_is_false(json_object_get(h, "usable")));
        CHECK_STR(json_string_value(json_object_get(h, "interval_note")),
                  "n = 2: too few rounds for an interval");
        CHECK(json_is_false(json_object_get(h, "outlier")));
    }
    CHECK(json_array_size(json_object_get(view, "outliers")) == 0);
    CHECK(json_number_value(json_object_get(fig(view, "z"), "lo")) == 0.0);
    json_decref(view);
    json_decref(rows);
    json_decref(hosts);
}

/* Only the engines' primary metrics count: the cpu engine's cpu.score, not
 * its per-kernel rates. */
static void test_primary_only(void)
{
    json_t *rows = check_json(
        "[{\"host\":\"a\",\"workload\":\"c\",\"metric\":\"cpu.int\",\"unit\":\"ops/s\","
        "\"higher_is_better\":true,\"kind\":\"cpu\",\"engine\":\"builtin\",\"values\":[1,2]},"
        "{\"host\":\"a\",\"workload\":\"c\",\"metric\":\"cpu.score\",\"unit\":\"score\","
        "\"higher_is_better\":true,\"kind\":\"cpu\",\"engine\":\"builtin\",\"values\":[1,2]}]");
    json_t *hosts = json_array();
    json_array_append_new(hosts, host("a", 1, "6.1"));
    json_t *view = hv_report_hosts_build(rows, hosts, 5);
    const json_t *series = json_object_get(view, "series");
    CHECK(json_array_size(series) == 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(series, 0), "metric")), "cpu.score");
    json_decref(view);
    json_decref(rows);
    json_decref(hosts);
}

/* A host's bare metal and its guests are separate series, each host
 * against the median of its own side: a slow guest side does not move the
 * host side's ratios. */
static void test_sides(void)
{
    json_t *rows = json_array(), *hosts = json_array();
    const char *names[] = {"a", "b", "c"};
    for (size_t i = 0; i < 3; i++) {
        json_t *r = row(names[i], "[100,101,99]");
        json_array_append_new(rows, r);
        json_array_append_new(hosts, host(names[i], (long)i + 1, "6.1"));
    }
    for (size_t i = 0; i < 3; i++) {
        json_t *r = row(names[i], i == 0 ? "[60,61,59]" : "[90,91,89]");
        json_object_set_new(r, "where", json_string("guests"));
        json_array_append_new(rows, r);
    }
    json_t *view = hv_report_hosts_build(rows, hosts, 1);
    const json_t *series = json_object_get(view, "series");
    CHECK(json_array_size(series) == 2);
    const json_t *h = json_array_get(series, 0), *g = json_array_get(series, 1);
    CHECK_STR(json_string_value(json_object_get(h, "where")), "host");
    CHECK_STR(json_string_value(json_object_get(g, "where")), "guests");
    CHECK(fabs(json_number_value(json_object_get(h, "median")) - 100.0) < 0.01);
    CHECK(fabs(json_number_value(json_object_get(g, "median")) - 90.0) < 0.01);
    CHECK(fabs(json_number_value(
                   json_object_get(json_array_get(json_object_get(h, "hosts"), 0), "ratio")) -
               1.0) < 1e-9);
    /* Only a's guests are an outlier, named with their side. */
    const json_t *o = json_array_get(json_object_get(view, "outliers"), 0);
    CHECK(json_array_size(json_object_get(view, "outliers")) == 1);
    CHECK_STR(json_string_value(json_object_get(o, "host")), "a");
    CHECK_STR(json_string_value(
                  json_object_get(json_array_get(json_object_get(o, "series"), 0), "where")),
              "guests");
    json_decref(view);
    json_decref(rows);
    json_decref(hosts);
}

static void test_fleet_plan(void)
{
    json_t *errors = json_array();
    const char *label = NULL;
    json_t *doc = check_json("{\"name\":\"f\",\"targets\":{\"host\":\"hv01\"}}");
    CHECK(hv_plan_fleet_label(doc, &label, errors) == 0 && label == NULL);
    json_decref(doc);
    doc = check_json("{\"name\":\"f\",\"targets\":{\"host\":{\"label\":\"pool=batch\"}}}");
    CHECK(hv_plan_fleet_label(doc, &label, errors) == 1);
    CHECK_STR(label, "pool=batch");
    CHECK((json_array_size(errors)) == 0);
    json_t *child = hv_plan_fleet_child(doc, "hv07", 42);
    char *text = json_dumps(child, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK_STR(text, "{\"name\":\"f\",\"seed\":42,\"targets\":{\"host\":\"hv07\"}}");
    free(text);
    json_decref(child);
    json_decref(doc);
    doc = check_json("{\"targets\":{\"host\":{\"label\":\"pool batch\",\"x\":1}}}");
    CHECK(hv_plan_fleet_label(doc, &label, errors) == -1);
    text = json_dumps(errors, JSON_COMPACT);
    CHECK_MSG(strstr(text, "/targets/host/x") != NULL && strstr(text, "/targets/host/label"), "%s",
              text);
    free(text);
    json_decref(doc);
    json_decref(errors);
}

int main(void)
{
    test_view();
    test_two_rounds();
    test_primary_only();
    test_sides();
    test_fleet_plan();
    return check_summary("test_report_hosts");
}
