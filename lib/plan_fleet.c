/* plan_fleet.c — fleet plans; see plan_fleet.h. */
#include "plan_fleet.h"

#include "errors.h"
#include "jspec.h"
#include "selector.h"

#include <string.h>

int hv_plan_fleet_label(const json_t *doc, const char **label, json_t *errors)
{
    const json_t *host = json_object_get(json_object_get(doc, "targets"), "host");
    *label = NULL;
    if (!json_is_object(host))
        return 0;
    const char *key;
    const json_t *v;
    int problems = 0;
    json_object_foreach((json_t *)host, key, v)
    {
        if (strcmp(key, "label") != 0) {
            char p[200];
            hv_jpath(p, sizeof p, "/targets/host", key);
            hv_errors_add(errors, p, "is not a member of a host selector (only \"label\")");
            problems++;
        }
    }
    const char *text = json_string_value(json_object_get(host, "label"));
    if (text == NULL) {
        hv_errors_add(errors, "/targets/host/label",
                      "a fleet plan's host is {\"label\": \"KEY=VALUE,...\"}: the label selector "
                      "of the hosts to run on");
        return -1;
    }
    char why[200];
    json_t *sel = hv_selector_parse(text, why, sizeof why);
    if (sel == NULL) {
        hv_errors_add(errors, "/targets/host/label", "must be a label selector: %s", why);
        problems++;
    }
    json_decref(sel);
    if (problems > 0)
        return -1;
    *label = text;
    return 1;
}

json_t *hv_plan_fleet_child(const json_t *doc, const char *host, json_int_t seed)
{
    json_t *child = json_deep_copy(doc);
    json_t *targets = json_object_get(child, "targets");
    if (child == NULL || !json_is_object(targets) ||
        json_object_set_new(targets, "host", json_string(host)) != 0 ||
        (json_object_get(child, "seed") == NULL &&
         json_object_set_new(child, "seed", json_integer(seed)) != 0)) {
        json_decref(child);
        return NULL;
    }
    return child;
}
