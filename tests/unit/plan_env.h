/* plan_env.h — the guests a plan's labels find, as the server's database
 * would answer them, for tests/unit/test_plan.c and fuzz/fuzz_plan.c:
 * "pool=net-bench" has eight guests (nb1 .. nb8), a selector naming the
 * key "broken" fails the lookup, any other selector finds none. Guest
 * names on a host whose name starts with "fleet" are that host's own
 * ("fleet1/vm0"); elsewhere they stay as written. */
#ifndef HV_TESTS_PLAN_ENV_H
#define HV_TESTS_PLAN_ENV_H

#include "plan.h"

#include <stdio.h>
#include <string.h>

static int plan_env_guests(void *arg, const char *host, const json_t *selector, json_t **names)
{
    (void)arg;
    (void)host;
    *names = json_array();
    const char *pool = json_string_value(json_object_get(selector, "pool"));
    if (json_object_size(selector) == 1 && pool != NULL && strcmp(pool, "net-bench") == 0)
        for (int i = 1; i <= 8; i++) {
            char n[16];
            snprintf(n, sizeof n, "nb%d", i);
            json_array_append_new(*names, json_string(n));
        }
    return json_object_get(selector, "broken") != NULL ? -1 : 0;
}

static int plan_env_domains(void *arg, const char *host, const json_t *domains, json_t **names)
{
    (void)arg;
    *names = json_array();
    for (size_t i = 0; i < json_array_size(domains); i++) {
        char n[300];
        const char *d = json_string_value(json_array_get(domains, i));
        if (host != NULL && strncmp(host, "fleet", 5) == 0)
            snprintf(n, sizeof n, "%s/%s", host, d);
        else
            snprintf(n, sizeof n, "%s", d);
        json_array_append_new(*names, json_string(n));
    }
    return 0;
}

static const struct hv_plan_env plan_env = {plan_env_guests, plan_env_domains, NULL, NULL};

#endif
