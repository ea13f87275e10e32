/* procpin.c — see procpin.h. */
#include "worker/virt/procpin.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void hv_process_pin_begin(struct hv_process_pin *p, const json_t *levels, const char *kind,
                          const char *engine, const json_t *params)
{
    memset(p, 0, sizeof *p);
    p->cpu = -1;
    const json_t *level = json_object_get(levels, "process_pin");
    p->asked = level != NULL;
    p->on = json_is_string(level) && strcasecmp(json_string_value(level), "on") == 0;
    if (p->asked &&
        !(p->on || (json_is_string(level) && strcasecmp(json_string_value(level), "off") == 0)))
        snprintf(p->error, sizeof p->error, "process_pin: the level must be on or off");
    p->engine_pins = kind != NULL && engine != NULL && strcmp(kind, "cpu") == 0 &&
                     strcmp(engine, "builtin") == 0;
    if (p->on && p->engine_pins) {
        p->params = json_is_object(params) ? json_deep_copy(params) : json_object();
        json_object_set_new(p->params, "pin", json_true());
    } else {
        p->params = json_incref((json_t *)params);
    }
}

const json_t *hv_process_pin_params(const struct hv_process_pin *p)
{
    return p->params;
}

/* The first CPU of the calling thread's affinity set, or -1. */
static int first_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            return c;
    return -1;
}

int hv_process_pin_enter(struct hv_process_pin *p)
{
    if (p->error[0] != '\0')
        return -1;
    if (p->on && !p->engine_pins) {
        p->cpu = first_cpu();
        cpu_set_t one;
        CPU_ZERO(&one);
        if (p->cpu >= 0)
            CPU_SET(p->cpu, &one);
        if (p->cpu < 0 || sched_setaffinity(0, sizeof one, &one) != 0) {
            snprintf(p->error, sizeof p->error,
                     "process_pin=on: cannot pin the engine to CPU %d: %s", p->cpu,
                     strerror(errno));
            return -1;
        }
    }
    CPU_ZERO(&p->affinity);
    p->read = sched_getaffinity(0, sizeof p->affinity, &p->affinity) == 0;
    return 0;
}

/* A CPU set as "0-3,6". */
static void set_string(const cpu_set_t *set, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && n < len; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int end = c;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
            end++;
        n += (size_t)(end == c ? snprintf(buf + n, len - n, "%s%d", n ? "," : "", c)
                               : snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", c, end));
        c = end;
    }
}

void hv_process_pin_observe(const struct hv_process_pin *p, json_t *observed)
{
    if (!p->asked || !json_is_object(observed))
        return;
    json_t *settings = json_object_get(observed, "settings");
    if (!json_is_object(settings)) {
        settings = json_object();
        json_object_set_new(observed, "settings", settings);
    }
    const char *level = p->on ? "on" : "off";
    json_t *s = json_pack("{s:s}", "level", level);
    char cpus[256];
    if (!p->read) {
        json_object_set_new(s, "read_back", json_null());
        json_object_set_new(s, "error",
                            json_string(p->error[0] ? p->error : "the affinity was not read"));
    } else if (p->on && p->engine_pins) {
        /* The copies were created pinned (pthread_create fails when the
         * affinity cannot be set): their CPUs are the engine's record. */
        const json_t *copies = json_object_get(observed, "cpus");
        bool pinned = json_is_true(json_object_get(observed, "pinned")) && json_is_array(copies);
        json_object_set_new(s, "read_back", json_string(pinned ? "on" : "off"));
        json_object_set_new(s, "source",
                            json_string("cpu engine: each copy created with the "
                                        "affinity of one CPU "
                                        "(pthread_attr_setaffinity_np)"));
        json_object_set_new(s, "detail", json_pack("{s:O*}", "copies", copies));
    } else {
        set_string(&p->affinity, cpus, sizeof cpus);
        /* off pins nothing: the engine keeps the worker's own affinity */
        bool exact = CPU_COUNT(&p->affinity) == 1 && p->cpu >= 0 && CPU_ISSET(p->cpu, &p->affinity);
        const char *rb = !p->on ? "off" : exact ? "on" : cpus;
        json_object_set_new(s, "read_back", json_string(rb));
        json_object_set_new(s, "source",
                            json_string("sched_getaffinity of the engine thread, which the "
                                        "benchmark's threads and processes inherit"));
        json_object_set_new(s, "detail", json_pack("{s:s}", "cpus", cpus));
    }
    json_object_set_new(settings, "process_pin", s);
}

void hv_process_pin_end(struct hv_process_pin *p)
{
    json_decref(p->params);
    p->params = NULL;
}
