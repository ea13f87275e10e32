/* plan_env.h — the guests a plan's labels find, as the server's database
 * would answer them, for tests/unit/test_plan.c and fuzz/fuzz_plan.c:
 * "pool=net-bench" has eight guests (nb1 .. nb8), "broken" fails the
 * lookup, any other label has none. */
#ifndef HV_TESTS_PLAN_ENV_H
#define HV_TESTS_PLAN_ENV_H

#include "plan.h"

#include <stdio.h>
#include <string.h>

static int plan_env_guests(void *arg, const char *key, const char *value, json_t **names)
{
    (void)arg;
    *names = json_array();
    if (strcmp(key, "pool") == 0 && strcmp(value, "net-bench") == 0)
        for (int i = 1; i <= 8; i++) {
            char n[16];
            snprintf(n, sizeof n, "nb%d", i);
            json_array_append_new(*names, json_string(n));
        }
    return strcmp(key, "broken") == 0 ? -1 : 0;
}

static const struct hv_plan_env plan_env = {plan_env_guests, NULL};

#endif
