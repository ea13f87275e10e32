/* telemetry.c — see telemetry.h. */
#include "worker/telemetry.h"

#include "httpc.h"
#include "log.h"
#include "timeutil.h"
#include "worker/state.h"
#include "worker/virt.h"
#include "worker/virt/actuator.h"
#include "worker/wake.h"

#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A job's telemetry is one upload; past this many samples the rest of a
 * long job is not sampled (the server's limit for one result). */
#define MAX_SAMPLES 200000

int hv_cpu_times_parse(const char *text, struct hv_cpu_times *out)
{
    memset(out, 0, sizeof *out);
    const char *line = text;
    while (line != NULL && strncmp(line, "cpu ", 4) != 0) {
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    if (line == NULL)
        return -1;
    unsigned long long v[8] = {0};
    int n = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    if (n < 4)
        return -1;
    *out = (struct hv_cpu_times){.user = v[0],
                                 .nice = v[1],
                                 .system = v[2],
                                 .idle = v[3],
                                 .iowait = v[4],
                                 .irq = v[5],
                                 .softirq = v[6],
                                 .steal = v[7]};
    return 0;
}

/* Reads a small file whole into buf. */
static int read_small(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0 ? 0 : -1;
}

int hv_cpu_times_read(const char *path, struct hv_cpu_times *out)
{
    char buf[8192];
    return read_small(path, buf, sizeof buf) == 0 ? hv_cpu_times_parse(buf, out) : -1;
}

unsigned long long hv_cpu_times_total(const struct hv_cpu_times *t)
{
    return t->user + t->nice + t->system + t->idle + t->iowait + t->irq + t->softirq + t->steal;
}

int hv_cpu_times_pct(const struct hv_cpu_times *a, const struct hv_cpu_times *b, double *user,
                     double *system, double *iowait, double *steal)
{
    unsigned long long ta = hv_cpu_times_total(a), tb = hv_cpu_times_total(b);
    if (tb <= ta)
        return -1;
    double total = (double)(tb - ta);
    /* A counter that went back (a CPU taken offline) counts 0. */
#define D(f) (b->f >= a->f ? (double)(b->f - a->f) : 0.0)
    *user = 100.0 * (D(user) + D(nice)) / total;
    *system = 100.0 * (D(system) + D(irq) + D(softirq)) / total;
    *iowait = 100.0 * D(iowait) / total;
    *steal = 100.0 * D(steal) / total;
#undef D
    return 0;
}

int hv_loadavg_parse(const char *text, double *load1, int *running)
{
    int run = 0, total = 0;
    if (sscanf(text, "%lf %*f %*f %d/%d", load1, &run, &total) != 3 || *load1 < 0 || run < 0)
        return -1;
    if (running != NULL)
        *running = run;
    return 0;
}

int hv_loadavg_read(const char *path, double *load1)
{
    char buf[256];
    return read_small(path, buf, sizeof buf) == 0 ? hv_loadavg_parse(buf, load1, NULL) : -1;
}

/* Which counter a "block.N.x" or "net.N.x" parameter adds to. */
static unsigned long long *dom_counter(struct hv_dom_stats *s, const char *field)
{
    static const struct {
        const char *prefix, *suffix;
        size_t offset;
    } rows[] = {
        {"block.", ".rd.bytes", offsetof(struct hv_dom_stats, rd_bytes)},
        {"block.", ".wr.bytes", offsetof(struct hv_dom_stats, wr_bytes)},
        {"block.", ".rd.reqs", offsetof(struct hv_dom_stats, rd_reqs)},
        {"block.", ".wr.reqs", offsetof(struct hv_dom_stats, wr_reqs)},
        {"net.", ".rx.bytes", offsetof(struct hv_dom_stats, rx_bytes)},
        {"net.", ".tx.bytes", offsetof(struct hv_dom_stats, tx_bytes)},
        {"net.", ".rx.drop", offsetof(struct hv_dom_stats, rx_drops)},
        {"net.", ".tx.drop", offsetof(struct hv_dom_stats, tx_drops)},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t p = strlen(rows[i].prefix);
        if (strncmp(field, rows[i].prefix, p) != 0 || !isdigit((unsigned char)field[p]))
            continue;
        const char *q = field + p;
        while (isdigit((unsigned char)*q))
            q++;
        if (strcmp(q, rows[i].suffix) == 0)
            return (unsigned long long *)(void *)((char *)s + rows[i].offset);
    }
    return NULL;
}

/* A typed parameter's value as an unsigned number; false for strings. */
static bool param_number(const virTypedParameter *p, unsigned long long *v)
{
    switch (p->type) {
    case VIR_TYPED_PARAM_INT:
        *v = p->value.i < 0 ? 0 : (unsigned long long)p->value.i;
        return true;
    case VIR_TYPED_PARAM_UINT:
        *v = p->value.ui;
        return true;
    case VIR_TYPED_PARAM_LLONG:
        *v = p->value.l < 0 ? 0 : (unsigned long long)p->value.l;
        return true;
    case VIR_TYPED_PARAM_ULLONG:
        *v = p->value.ul;
        return true;
    default:
        return false;
    }
}

void hv_dom_stats_from_params(const void *params, int nparams, struct hv_dom_stats *out)
{
    const virTypedParameter *p = params;
    for (int i = 0; i < nparams; i++) {
        unsigned long long v;
        if (!param_number(&p[i], &v))
            continue;
        if (strcmp(p[i].field, "cpu.time") == 0) {
            out->cpu_ns = v;
            out->have_cpu = true;
            continue;
        }
        unsigned long long *c = dom_counter(out, p[i].field);
        if (c == NULL)
            continue;
        *c += v;
        if (p[i].field[0] == 'b')
            out->have_block = true;
        else
            out->have_net = true;
    }
}

static void quiet_errors(void *data, virErrorPtr err)
{
    (void)data;
    (void)err;
}

/* The stats of every active domain of conn. */
static int collect_conn(const struct hv_virt *lv, virConnectPtr conn, struct hv_dom_stats **out,
                        size_t *n, char *err, size_t errlen)
{
    virDomainStatsRecordPtr *recs = NULL;
    int got = lv->ConnectGetAllDomainStats(
        conn, VIR_DOMAIN_STATS_CPU_TOTAL | VIR_DOMAIN_STATS_BLOCK | VIR_DOMAIN_STATS_INTERFACE,
        &recs, VIR_CONNECT_GET_ALL_DOMAINS_STATS_ACTIVE);
    if (got < 0) {
        snprintf(err, errlen, "virConnectGetAllDomainStats: %s", lv->GetLastErrorMessage());
        return -1;
    }
    struct hv_dom_stats *list = calloc(got > 0 ? (size_t)got : 1, sizeof *list);
    if (list == NULL) {
        lv->DomainStatsRecordListFree(recs);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < got; i++) {
        struct hv_dom_stats *s = &list[i];
        const char *name = lv->DomainGetName(recs[i]->dom);
        snprintf(s->name, sizeof s->name, "%s", name ? name : "");
        char uuid[VIR_UUID_STRING_BUFLEN] = "";
        lv->DomainGetUUIDString(recs[i]->dom, uuid);
        for (size_t k = 0; uuid[k] != '\0' && k + 1 < sizeof s->uuid; k++)
            s->uuid[k] = (char)tolower((unsigned char)uuid[k]);
        hv_dom_stats_from_params(recs[i]->params, recs[i]->nparams, s);
    }
    lv->DomainStatsRecordListFree(recs);
    *out = list;
    *n = (size_t)got;
    return 0;
}

/* Opens uri read-only, quietly. */
static virConnectPtr open_quiet(const struct hv_virt *lv, const char *uri, char *err, size_t errlen)
{
    lv->SetErrorFunc(NULL, quiet_errors);
    virConnectPtr conn = lv->ConnectOpenReadOnly(uri);
    if (conn == NULL)
        snprintf(err, errlen, "cannot open libvirt at %s: %s", uri, lv->GetLastErrorMessage());
    else
        lv->ConnSetErrorFunc(conn, NULL, quiet_errors);
    return conn;
}

int hv_dom_stats_collect(const char *uri, struct hv_dom_stats **out, size_t *n, char *err,
                         size_t errlen)
{
    *out = NULL;
    *n = 0;
    const struct hv_virt *lv = hv_virt_load(err, errlen);
    if (lv == NULL)
        return -1;
    virConnectPtr conn = open_quiet(lv, uri, err, errlen);
    if (conn == NULL)
        return -1;
    int rc = collect_conn(lv, conn, out, n, err, errlen);
    lv->ConnectClose(conn);
    return rc;
}

/* ---- the thread ---- */

/* One guest job being sampled. */
struct tracked {
    long long job;
    int attempt;
    char uuid[40];
    char t0[32];
    double mono0;
    json_t *samples;
    size_t n; /* ticks sampled */
    double others_sum, others_max, steal_sum, host_sum;
    double nonguest_sum; /* over nonguest_n ticks */
    size_t nonguest_n;
    char fail[256]; /* the last sampling failure */
    bool listed;    /* in the server's latest list */
    char domain[128];
    json_t *tuning; /* what to read back when it ends ({"plan_id", "levels", ...}), or NULL */
};

/* One tick's view of the host. */
struct snapshot {
    bool valid;
    double mono;
    bool have_cpu;
    struct hv_cpu_times cpu;
    struct hv_dom_stats *doms;
    size_t ndoms;
};

static atomic_bool stopping;

/* hv_telemetry_sync(): the caller asks for a pass (sync_asked), the
 * thread says which request its last finished pass began after
 * (sync_done). */
static pthread_mutex_t sync_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_cv = PTHREAD_COND_INITIALIZER;
/* Wakes the thread's wait for its next pass: a pass asked for, a stop. */
static pthread_cond_t tick_cv = PTHREAD_COND_INITIALIZER;
static atomic_ulong sync_asked;
static unsigned long sync_done;

/* Whether the thread should end: a shutdown signal or hv_telemetry_stop(). */
static bool should_stop(void)
{
    return hv_shutdown_requested() || atomic_load(&stopping);
}

static struct {
    struct hv_telemetry_config cfg;
    pthread_t thread;
    bool started;
    struct hv_httpc *http;
    const struct hv_virt *lv;
    virConnectPtr conn;
    struct tracked *jobs;
    size_t njobs;
    struct snapshot prev;
} tel;

static void add_sample(struct tracked *j, const char *metric, double t, double value)
{
    if (json_array_size(j->samples) >= MAX_SAMPLES)
        return;
    json_array_append_new(j->samples, json_pack("{s:s,s:f,s:f}", "metric", metric, "t", t, "value",
                                                value < 0 ? 0 : value));
}

static const struct hv_dom_stats *find_dom(const struct snapshot *s, const char *uuid)
{
    for (size_t i = 0; i < s->ndoms; i++)
        if (strcmp(s->doms[i].uuid, uuid) == 0)
            return &s->doms[i];
    return NULL;
}

static void snapshot_clear(struct snapshot *s)
{
    free(s->doms);
    *s = (struct snapshot){0};
}

/* Takes this tick's snapshot; err says what could not be read. */
static void take_snapshot(struct snapshot *s, char *err, size_t errlen)
{
    *s = (struct snapshot){.valid = true, .mono = hv_monotonic()};
    char path[1100];
    snprintf(path, sizeof path, "%s/proc/stat", tel.cfg.proc_root);
    s->have_cpu = hv_cpu_times_read(path, &s->cpu) == 0;
    if (!s->have_cpu)
        snprintf(err, errlen, "cannot read %.200s", path);
    if (tel.lv == NULL)
        tel.lv = hv_virt_load(err, errlen);
    if (tel.lv == NULL)
        return;
    if (tel.conn == NULL)
        tel.conn = open_quiet(tel.lv, tel.cfg.libvirt, err, errlen);
    if (tel.conn == NULL)
        return;
    if (collect_conn(tel.lv, tel.conn, &s->doms, &s->ndoms, err, errlen) != 0) {
        /* The daemon may have restarted: reconnect at the next tick. */
        tel.lv->ConnectClose(tel.conn);
        tel.conn = NULL;
    }
}

/* Adds the interval from prev to cur to job j. */
static void sample_job(struct tracked *j, const struct snapshot *prev, const struct snapshot *cur,
                       double load1, bool have_load)
{
    double dt = cur->mono - prev->mono;
    double t = cur->mono - j->mono0;
    if (dt <= 0)
        return;
    double user, sys, iowait, steal;
    bool cpu = prev->have_cpu && cur->have_cpu &&
               hv_cpu_times_pct(&prev->cpu, &cur->cpu, &user, &sys, &iowait, &steal) == 0;
    if (cpu) {
        add_sample(j, "host.cpu.user_pct", t, user);
        add_sample(j, "host.cpu.system_pct", t, sys);
        add_sample(j, "host.cpu.iowait_pct", t, iowait);
        add_sample(j, "host.cpu.steal_pct", t, steal);
    }
    if (have_load)
        add_sample(j, "host.load1", t, load1);
    const struct hv_dom_stats *a = find_dom(prev, j->uuid), *b = find_dom(cur, j->uuid);
    double guest = -1; /* the guest's CPU, % of one CPU; -1: unknown */
    if (a != NULL && b != NULL) {
#define RATE(f) (b->f >= a->f ? (double)(b->f - a->f) / dt : 0.0)
        if (a->have_cpu && b->have_cpu) {
            guest = RATE(cpu_ns) / 1e9 * 100.0;
            add_sample(j, "host.domain.vcpu_time_pct", t, guest);
        }
        if (a->have_block && b->have_block) {
            add_sample(j, "host.domain.block.rd_bytes_s", t, RATE(rd_bytes));
            add_sample(j, "host.domain.block.wr_bytes_s", t, RATE(wr_bytes));
            add_sample(j, "host.domain.block.rd_reqs_s", t, RATE(rd_reqs));
            add_sample(j, "host.domain.block.wr_reqs_s", t, RATE(wr_reqs));
        }
        if (a->have_net && b->have_net) {
            add_sample(j, "host.domain.net.rx_bytes_s", t, RATE(rx_bytes));
            add_sample(j, "host.domain.net.tx_bytes_s", t, RATE(tx_bytes));
            add_sample(j, "host.domain.net.rx_drops_s", t, RATE(rx_drops));
            add_sample(j, "host.domain.net.tx_drops_s", t, RATE(tx_drops));
        }
#undef RATE
    } else if (b == NULL) {
        snprintf(j->fail, sizeof j->fail, "domain %s is not among the host's active domains",
                 j->uuid);
    }
    /* The other domains' CPU: what competed with the guest. */
    double others = 0;
    bool have_others = cur->ndoms > 0 || prev->ndoms > 0;
    for (size_t i = 0; i < cur->ndoms; i++) {
        const struct hv_dom_stats *o = &cur->doms[i];
        const struct hv_dom_stats *p = find_dom(prev, o->uuid);
        if (strcmp(o->uuid, j->uuid) == 0 || p == NULL || !o->have_cpu || !p->have_cpu ||
            o->cpu_ns < p->cpu_ns)
            continue;
        others += (double)(o->cpu_ns - p->cpu_ns) / dt / 1e9 * 100.0;
    }
    if (have_others)
        add_sample(j, "host.others.cpu_pct", t, others);
    /* The host's busy CPU (guest time is in /proc/stat's user time) less
     * every domain's: the host's own work, % of one CPU. */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpu && guest >= 0 && ncpu > 0) {
        double nonguest = (user + sys) * (double)ncpu - guest - others;
        if (nonguest < 0)
            nonguest = 0;
        add_sample(j, "host.nonguest.cpu_pct", t, nonguest);
        j->nonguest_sum += nonguest;
        j->nonguest_n++;
    }
    if (cpu || have_others) {
        j->n++;
        j->others_sum += others;
        if (others > j->others_max)
            j->others_max = others;
        j->steal_sum += cpu ? steal : 0;
        j->host_sum += cpu ? user + sys : 0;
    }
}

/* Loads the worker credential kept by the claim loop. */
static bool load_credential(void)
{
    char cred[80];
    long long id;
    if (hv_state_credential_load(tel.cfg.server, cred, sizeof cred, &id) != 0)
        return false;
    int rc = hv_httpc_set_token(tel.http, cred);
    memset(cred, 0, sizeof cred);
    return rc == 0;
}

/* One factor of the reading taken at the end of j: its domain's reading
 * (detail.DOMAIN) for a guest factor, the host's for a host factor. Adds
 * it to settings, and what changed or could not be read to changed or
 * missing. */
static void take_factor(const char *domain, const char *f, const json_t *e, json_t *settings,
                        json_t *changed, json_t *missing)
{
    const char *level = json_string_value(json_object_get(e, "level"));
    const json_t *per = json_object_get(json_object_get(e, "detail"), domain);
    const json_t *at = json_is_object(per) && json_object_get(per, "read_back") != NULL ? per : e;
    const char *now = json_string_value(json_object_get(at, "read_back"));
    const char *src = json_string_value(json_object_get(at, "source"));
    if (src == NULL)
        src = json_string_value(json_object_get(e, "source"));
    if (level == NULL || now == NULL || now[0] == '\0') {
        const char *why = json_string_value(json_object_get(per, "error"));
        json_array_append_new(missing, json_sprintf("%s: %s", f, why ? why : "not read"));
        return;
    }
    json_object_set_new(
        settings, f,
        json_pack("{s:s, s:s, s:s?}", "level", level, "read_back", now, "source", src));
    if (strcmp(now, level) == 0)
        return;
    if (at == per)
        json_array_append_new(changed, json_sprintf("%s=%s: %s reads back %s (%s)", f, level,
                                                    domain, now, src ? src : "?"));
    else
        json_array_append_new(
            changed, json_sprintf("%s=%s: reads back %s (%s)", f, level, now, src ? src : "?"));
}

/* Joins the strings of list with "; " into buf. */
static void join_list(const json_t *list, char *buf, size_t len)
{
    size_t n = 0;
    size_t i;
    const json_t *v;
    buf[0] = '\0';
    json_array_foreach(list, i, v)
    {
        if (n + 1 < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "; " : "", json_string_value(v));
    }
}

/* Reads the levels of j's block back (guest factors on every domain of its
 * plan, whose levels such as vcpu_pin's CPUs depend on the others; host
 * factors on the host) now that it ended, into body: "settings" (factor
 * → {"level", "read_back", "source"}, j's domain's reading), with
 * "settings_changed" naming each level that reads back another value, or
 * "settings_missing" when a level could not be read. */
static void read_settings(const struct tracked *j, json_t *body)
{
    const json_t *levels = json_object_get(j->tuning, "levels");
    if (json_object_size(levels) == 0)
        return;
    json_t *domains = json_deep_copy(json_object_get(j->tuning, "domains"));
    if (!json_is_array(domains)) {
        json_decref(domains);
        domains = json_array();
    }
    bool listed = false;
    size_t i;
    const json_t *v;
    json_array_foreach(domains, i, v) listed =
        listed || strcmp(json_string_value(v), j->domain) == 0;
    if (!listed)
        json_array_append_new(domains, json_string(j->domain));
    struct hv_act_ctx ctx = {
        .root = tel.cfg.sysfs_root,
        .libvirt_uri = tel.cfg.libvirt,
        .disk = json_string_value(json_object_get(j->tuning, "disk")),
        .nic = json_string_value(json_object_get(j->tuning, "nic")),
        .domains = domains,
        .plan_id = (long long)json_integer_value(json_object_get(j->tuning, "plan_id"))};
    json_t *end = NULL;
    char err[4096] = "";
    hv_actuators_read_back(levels, &ctx, &end, err, sizeof err);
    hv_act_ctx_release(&ctx);
    json_decref(domains);
    json_t *reading = hv_telemetry_reading(end, j->domain, err);
    json_decref(end);
    const char *changed = json_string_value(json_object_get(reading, "settings_changed"));
    const char *missing = json_string_value(json_object_get(reading, "settings_missing"));
    if (changed != NULL)
        hv_warn("job %lld: a setting changed under the job: %s", j->job, changed);
    else if (missing != NULL)
        hv_warn("job %lld: its settings could not be read back: %s", j->job, missing);
    json_object_update(body, reading);
    json_decref(reading);
}

json_t *hv_telemetry_reading(const json_t *end, const char *domain, const char *err)
{
    json_t *settings = json_object(), *changed = json_array(), *missing = json_array();
    const char *f;
    json_t *e;
    json_object_foreach((json_t *)end, f, e) take_factor(domain, f, e, settings, changed, missing);
    if (json_object_size(end) == 0)
        json_array_append_new(missing,
                              json_string(err != NULL && err[0] ? err : "nothing could be read"));
    json_t *out = json_pack("{s:o}", "settings", settings);
    char text[4000];
    if (json_array_size(changed) > 0) {
        join_list(changed, text, sizeof text);
        json_object_set_new(out, "settings_changed", json_string(text));
    } else if (json_array_size(missing) > 0) {
        join_list(missing, text, 1000);
        json_object_set_new(out, "settings_missing", json_string(text));
    }
    json_decref(changed);
    json_decref(missing);
    return out;
}

/* Uploads what job j holds, then forgets it. Failure is logged only. */
static void finish_job(struct tracked *j)
{
    json_t *body = json_pack("{s:i}", "attempt", j->attempt);
    read_settings(j, body);
    if (j->n > 0 && json_array_size(j->samples) > 0) {
        double n = (double)j->n;
        double others = j->others_sum / n, steal = j->steal_sum / n;
        double nonguest = j->nonguest_n > 0 ? j->nonguest_sum / (double)j->nonguest_n : 0;
        bool busy = others >= HV_BUSY_OTHERS_PCT || steal >= HV_BUSY_STEAL_PCT ||
                    nonguest >= HV_BUSY_NONGUEST_PCT;
        json_object_set_new(body, "status", json_string("ok"));
        json_object_set_new(body, "t0", json_string(j->t0));
        json_object_set(body, "samples", j->samples);
        json_t *hb =
            json_pack("{s:b,s:f,s:f,s:f,s:f,s:i,s:f,s:f,s:f}", "busy", busy, "others_cpu_pct",
                      others, "others_cpu_pct_max", j->others_max, "steal_pct", steal,
                      "host_cpu_pct", j->host_sum / n, "seconds", (int)j->n, "others_threshold_pct",
                      HV_BUSY_OTHERS_PCT, "steal_threshold_pct", HV_BUSY_STEAL_PCT,
                      "nonguest_threshold_pct", HV_BUSY_NONGUEST_PCT);
        /* Only when the domain's CPU time was known (not with every driver). */
        json_object_set_new(hb, "nonguest_cpu_pct",
                            j->nonguest_n > 0 ? json_real(nonguest) : json_null());
        json_object_set_new(body, "observed", json_pack("{s:o}", "host_busy", hb));
    } else {
        json_object_set_new(body, "status", json_string("missing"));
        json_object_set_new(body, "reason",
                            json_string(j->fail[0] ? j->fail
                                                   : "the job ended before the host took two "
                                                     "samples"));
    }
    char path[96];
    snprintf(path, sizeof path, "/api/v1/jobs/%lld/telemetry", j->job);
    for (int tries = 0; tries < 3; tries++) {
        struct hv_http_response resp;
        hv_httpc_request(tel.http, "POST", path, body, &resp);
        long st = resp.status;
        char what[300];
        hv_http_response_describe(&resp, what, sizeof what);
        hv_http_response_clear(&resp);
        if (st >= 200 && st < 300) {
            hv_info("job %lld attempt %d: host telemetry sent (%zu samples)", j->job, j->attempt,
                    json_array_size(j->samples));
            break;
        }
        if (st == 401 && load_credential())
            continue;
        if (st != 0 && st < 500) {
            hv_warn("job %lld: host telemetry refused: %s", j->job, what);
            break;
        }
        if (tries == 2)
            hv_warn("job %lld: host telemetry not sent: %s", j->job, what);
        else
            sleep(1);
    }
    json_decref(body);
    json_decref(j->samples);
    j->samples = NULL;
    json_decref(j->tuning);
    j->tuning = NULL;
}

/* Asks the server which jobs run on this host's domains and updates the
 * list: new jobs start, jobs no longer listed are uploaded. false when
 * the server did not answer (the list stays as it was). */
static bool refresh_jobs(void)
{
    struct hv_http_response resp;
    hv_httpc_request(tel.http, "GET", "/api/v1/workers/telemetry", NULL, &resp);
    if (resp.status == 401 || resp.status == 403) {
        hv_http_response_clear(&resp);
        load_credential();
        return false;
    }
    const json_t *list = json_object_get(resp.body, "jobs");
    if (resp.status != 200 || !json_is_array(list)) {
        hv_http_response_clear(&resp);
        return false;
    }
    for (size_t k = 0; k < tel.njobs; k++)
        tel.jobs[k].listed = false;
    size_t i;
    const json_t *row;
    json_array_foreach(list, i, row)
    {
        long long id = json_integer_value(json_object_get(row, "job_id"));
        int attempt = (int)json_integer_value(json_object_get(row, "attempt"));
        const char *uuid =
            json_string_value(json_object_get(json_object_get(row, "domain"), "uuid"));
        if (id <= 0 || uuid == NULL)
            continue;
        bool known = false;
        for (size_t k = 0; k < tel.njobs; k++)
            if (tel.jobs[k].job == id && tel.jobs[k].attempt == attempt)
                known = tel.jobs[k].listed = true;
        if (known)
            continue;
        struct tracked *grown = realloc(tel.jobs, (tel.njobs + 1) * sizeof *grown);
        if (grown == NULL)
            continue;
        tel.jobs = grown;
        struct tracked *j = &tel.jobs[tel.njobs++];
        *j = (struct tracked){.job = id,
                              .attempt = attempt,
                              .listed = true,
                              .mono0 = hv_monotonic(),
                              .samples = json_array()};
        snprintf(j->uuid, sizeof j->uuid, "%s", uuid);
        const char *dom =
            json_string_value(json_object_get(json_object_get(row, "domain"), "name"));
        snprintf(j->domain, sizeof j->domain, "%s", dom != NULL ? dom : "");
        const json_t *tuning = json_object_get(row, "tuning");
        if (json_is_object(tuning) && dom != NULL)
            j->tuning = json_deep_copy(tuning);
        hv_now_iso8601(j->t0, sizeof j->t0);
        hv_info("job %lld attempt %d runs on domain %s: sampling the host", id, attempt,
                json_string_value(json_object_get(json_object_get(row, "domain"), "name")));
    }
    hv_http_response_clear(&resp);
    size_t kept = 0;
    for (size_t k = 0; k < tel.njobs; k++) {
        if (tel.jobs[k].listed)
            tel.jobs[kept++] = tel.jobs[k];
        else
            finish_job(&tel.jobs[k]);
    }
    tel.njobs = kept;
    return true;
}

/* Sleeps until next (a monotonic time), waking early when a pass is asked
 * for (after pass `done`) or the thread is stopped; a shutdown signal is
 * seen within a second. One wake-up a pass, not a poll. */
static void sleep_until(double next, unsigned long done)
{
    pthread_mutex_lock(&sync_mu);
    while (!should_stop() && atomic_load(&sync_asked) == done) {
        double left = next - hv_monotonic();
        if (left <= 0)
            break;
        if (left > 1.0)
            left = 1.0;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double end = (double)until.tv_nsec / 1e9 + left;
        until.tv_sec += (time_t)end;
        until.tv_nsec = (long)((end - (double)(time_t)end) * 1e9);
        pthread_cond_timedwait(&tick_cv, &sync_mu, &until);
    }
    pthread_mutex_unlock(&sync_mu);
}

static void *run(void *arg)
{
    (void)arg;
    double next = hv_monotonic();
    while (!should_stop()) {
        unsigned long asked = atomic_load(&sync_asked);
        refresh_jobs();
        pthread_mutex_lock(&sync_mu);
        sync_done = asked;
        pthread_cond_broadcast(&sync_cv);
        pthread_mutex_unlock(&sync_mu);
        if (tel.njobs == 0) {
            snapshot_clear(&tel.prev);
        } else {
            struct snapshot cur;
            char err[256] = "";
            take_snapshot(&cur, err, sizeof err);
            char lpath[1100];
            snprintf(lpath, sizeof lpath, "%s/proc/loadavg", tel.cfg.proc_root);
            double load1 = 0;
            bool have_load = hv_loadavg_read(lpath, &load1) == 0;
            for (size_t k = 0; k < tel.njobs; k++) {
                if (err[0] != '\0')
                    snprintf(tel.jobs[k].fail, sizeof tel.jobs[k].fail, "%s", err);
                if (tel.prev.valid)
                    sample_job(&tel.jobs[k], &tel.prev, &cur, load1, have_load);
            }
            snapshot_clear(&tel.prev);
            tel.prev = cur;
        }
        next += 1.0;
        if (next < hv_monotonic())
            next = hv_monotonic();
        sleep_until(next, asked);
    }
    pthread_mutex_lock(&sync_mu);
    sync_done = ULONG_MAX;
    pthread_cond_broadcast(&sync_cv);
    pthread_mutex_unlock(&sync_mu);
    for (size_t k = 0; k < tel.njobs; k++)
        finish_job(&tel.jobs[k]);
    free(tel.jobs);
    tel.jobs = NULL;
    tel.njobs = 0;
    snapshot_clear(&tel.prev);
    if (tel.conn != NULL)
        tel.lv->ConnectClose(tel.conn);
    tel.conn = NULL;
    return NULL;
}

int hv_telemetry_start(const struct hv_telemetry_config *cfg)
{
    if (tel.started)
        return 0;
    tel.cfg = *cfg;
    if (tel.cfg.proc_root == NULL || strcmp(tel.cfg.proc_root, "/") == 0)
        tel.cfg.proc_root = "";
    tel.http = hv_httpc_new(cfg->server, NULL, 10);
    if (tel.http == NULL || !load_credential()) {
        hv_warn("host telemetry is off: no worker credential to send it with");
        hv_httpc_free(tel.http);
        tel.http = NULL;
        return -1;
    }
    if (pthread_create(&tel.thread, NULL, run, NULL) != 0) {
        hv_httpc_free(tel.http);
        tel.http = NULL;
        return -1;
    }
    tel.started = true;
    hv_info("host telemetry: sampling this host and the domains of %s while guest jobs run",
            cfg->libvirt);
    return 0;
}

void hv_telemetry_sync(double timeout)
{
    if (!tel.started)
        return;
    unsigned long want = atomic_fetch_add(&sync_asked, 1) + 1;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)timeout;
    pthread_mutex_lock(&sync_mu);
    pthread_cond_broadcast(&tick_cv);
    int rc = 0;
    while (sync_done < want && rc == 0)
        rc = pthread_cond_timedwait(&sync_cv, &sync_mu, &until);
    bool done = sync_done >= want;
    pthread_mutex_unlock(&sync_mu);
    if (!done)
        hv_warn("host telemetry: ended guest jobs not read back within %.0f s; going on", timeout);
}

void hv_telemetry_stop(void)
{
    if (!tel.started)
        return;
    atomic_store(&stopping, true);
    pthread_mutex_lock(&sync_mu);
    pthread_cond_broadcast(&tick_cv);
    pthread_mutex_unlock(&sync_mu);
    pthread_join(tel.thread, NULL);
    tel.started = false;
    hv_httpc_free(tel.http);
    tel.http = NULL;
}
