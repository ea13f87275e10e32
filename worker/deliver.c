/* deliver.c — see deliver.h. */
#include "worker/deliver.h"

#include "fault.h"
#include "log.h"
#include "timeutil.h"
#include "worker/state.h"
#include "worker/wake.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BACKOFF_FIRST 1.0
#define BACKOFF_MAX   30.0
/* How long a worker told to stop keeps trying to deliver a result it could
 * not keep on disk (one on disk waits for the next start instead): well
 * inside the shipped unit's TimeoutStopSec=60. A try under way when it
 * runs out may take up to the client's own timeout. */
#define STOP_DELIVERY_SECONDS 10.0
/* Room left in the body cap for what the estimate of the serialised size
 * does not see exactly. */
#define BODY_MARGIN 4096
/* Below this many bytes of escaped raw output, cutting is pointless: the
 * raw output is dropped instead. */
#define RAW_MIN 1024

static struct hv_result_limits limits = {1u << 20, 200000, 1u << 20};

void hv_deliver_set_limits(const struct hv_result_limits *l)
{
    limits = *l;
}

/* Bytes of s[0..n) once jansson escapes it (without the quotes): '"' and
 * '\\' and the short escapes take 2, other control characters 6. */
static size_t escaped_len(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\' || ch == '\b' || ch == '\f' || ch == '\n' || ch == '\r' ||
            ch == '\t')
            k += 2;
        else if (ch < 0x20 || ch == 0x7f)
            k += ch == 0x7f ? 1 : 6;
        else
            k += 1;
    }
    return k;
}

/* The longest prefix of s whose escaped size is at most budget, ending on
 * a UTF-8 character boundary. */
static size_t prefix_within(const char *s, size_t n, size_t budget)
{
    size_t k = 0, i = 0;
    for (; i < n; i++) {
        size_t step = escaped_len(s + i, 1);
        if (k + step > budget)
            break;
        k += step;
    }
    while (i > 0 && i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
        i--;
    return i;
}

static json_t *observed_of(json_t *body)
{
    json_t *o = json_object_get(body, "observed");
    if (!json_is_object(o)) {
        o = json_object();
        json_object_set_new(body, "observed", o);
    }
    return o;
}

/* Cuts "raw" to at most budget escaped bytes (marker included), or drops
 * it when that leaves too little; notes it in observed.raw_truncated. */
static void cut_raw(json_t *body, size_t budget)
{
    json_t *raw = json_object_get(body, "raw");
    const char *s = json_string_value(raw);
    size_t n = json_string_length(raw);
    json_t *obs = observed_of(body);
    json_t *note = json_object_get(obs, "raw_truncated");
    size_t original = note ? (size_t)json_integer_value(json_object_get(note, "of_bytes")) : n;
    char marker[160];
    snprintf(marker, sizeof marker,
             "\n[hvbench-worker: raw output truncated to fit the server's limits; the first "
             "%zu of %zu bytes are above]\n",
             (size_t)0, original);
    size_t room = budget > strlen(marker) + 32 ? budget - strlen(marker) - 32 : 0;
    if (room < RAW_MIN) {
        json_object_del(body, "raw");
        json_object_set_new(
            obs, "raw_truncated",
            json_pack("{s:i,s:I}", "kept_bytes", 0, "of_bytes", (json_int_t)original));
        return;
    }
    size_t keep = prefix_within(s, n, room);
    snprintf(marker, sizeof marker,
             "\n[hvbench-worker: raw output truncated to fit the server's limits; the first "
             "%zu of %zu bytes are above]\n",
             keep, original);
    char *text = malloc(keep + strlen(marker) + 1);
    if (text == NULL) {
        json_object_del(body, "raw");
        return;
    }
    memcpy(text, s, keep);
    strcpy(text + keep, marker);
    json_object_set_new(body, "raw", json_stringn(text, keep + strlen(marker)));
    free(text);
    json_object_set_new(
        obs, "raw_truncated",
        json_pack("{s:I,s:I}", "kept_bytes", (json_int_t)keep, "of_bytes", (json_int_t)original));
}

/* Averages every factor consecutive samples of each metric into one (t
 * and value), keeping the metrics' order of first appearance. Returns the
 * new array (a new reference) or NULL when memory runs out. */
static json_t *average_down(const json_t *samples, size_t factor)
{
    json_t *by_metric = json_object(), *order = json_array(), *out = json_array();
    size_t i;
    const json_t *smp;
    json_array_foreach(samples, i, smp)
    {
        const char *m = json_string_value(json_object_get(smp, "metric"));
        if (m == NULL)
            continue;
        json_t *list = json_object_get(by_metric, m);
        if (list == NULL) {
            list = json_array();
            json_object_set_new(by_metric, m, list);
            json_array_append_new(order, json_string(m));
        }
        json_array_append(list, (json_t *)smp);
    }
    size_t k;
    json_t *name;
    json_array_foreach(order, k, name)
    {
        const json_t *list = json_object_get(by_metric, json_string_value(name));
        size_t n = json_array_size(list);
        for (size_t a = 0; a < n; a += factor) {
            double st = 0, sv = 0;
            size_t b = a;
            for (; b < n && b < a + factor; b++) {
                st += json_number_value(json_object_get(json_array_get(list, b), "t"));
                sv += json_number_value(json_object_get(json_array_get(list, b), "value"));
            }
            double cnt = (double)(b - a);
            json_array_append_new(
                out, json_pack("{s:O,s:f,s:f}", "metric", name, "t", st / cnt, "value", sv / cnt));
        }
    }
    json_decref(by_metric);
    json_decref(order);
    return out;
}

/* Replaces the samples by their averages over factor samples and notes it
 * in observed.samples_downsampled. */
static int downsample(json_t *body, size_t factor)
{
    json_t *samples = json_object_get(body, "samples");
    size_t before = json_array_size(samples);
    json_t *fewer = average_down(samples, factor);
    if (fewer == NULL)
        return -1;
    json_t *obs = observed_of(body);
    json_t *note = json_object_get(obs, "samples_downsampled");
    size_t original = note ? (size_t)json_integer_value(json_object_get(note, "from")) : before;
    size_t total =
        note ? factor * (size_t)json_integer_value(json_object_get(note, "factor")) : factor;
    json_object_set_new(obs, "samples_downsampled",
                        json_pack("{s:I,s:I,s:I}", "factor", (json_int_t)total, "from",
                                  (json_int_t)original, "to", (json_int_t)json_array_size(fewer)));
    json_object_set_new(body, "samples", fewer);
    hv_info("result: %zu samples averaged over %zu into %zu to fit the server's limits", before,
            factor, json_array_size(fewer));
    return 0;
}

int hv_result_fit(json_t *body, const struct hv_result_limits *l)
{
    size_t n = json_array_size(json_object_get(body, "samples"));
    if (l->max_samples > 0 && n > l->max_samples &&
        downsample(body, (n + l->max_samples - 1) / l->max_samples) != 0)
        return -1;
    json_t *raw = json_object_get(body, "raw");
    /* Raw output the engine kept only the start of (its capture stopped at
     * a cap) carries the note but no marker yet: kept_bytes is all of it. */
    json_t *note = json_object_get(json_object_get(body, "observed"), "raw_truncated");
    bool unmarked = raw != NULL && note != NULL &&
                    json_integer_value(json_object_get(note, "kept_bytes")) ==
                        (json_int_t)json_string_length(raw);
    /* Escaped bytes are never fewer than bytes, so an escaped budget of
     * max_raw keeps at most max_raw bytes. */
    if (raw != NULL && (json_string_length(raw) > l->max_raw || unmarked))
        cut_raw(body, l->max_raw);
    size_t cap = l->max_bytes > 2 * BODY_MARGIN ? l->max_bytes - BODY_MARGIN : l->max_bytes;
    for (int round = 0; round < 64; round++) {
        size_t size = json_dumpb(body, NULL, 0, JSON_COMPACT);
        if (size <= cap)
            return 0;
        raw = json_object_get(body, "raw");
        size_t over = size - cap;
        if (raw != NULL) {
            size_t esc = escaped_len(json_string_value(raw), json_string_length(raw));
            cut_raw(body, esc > over ? esc - over : 0);
            continue;
        }
        if (json_array_size(json_object_get(body, "samples")) > 1 && downsample(body, 2) == 0)
            continue;
        return -1;
    }
    return -1;
}

/* The error result sent instead of a refused one: same attempt and times,
 * the server's reason. A new reference. */
static json_t *refusal_result(const json_t *body, const char *reason)
{
    char error[1024];
    snprintf(error, sizeof error, "the server refused this job's result: %s", reason);
    json_t *e = json_pack("{s:O,s:s,s:s}", "attempt", json_object_get(body, "attempt"), "status",
                          "error", "error", error);
    const char *keys[] = {"started_at", "finished_at"};
    for (size_t i = 0; e != NULL && i < 2; i++)
        if (json_is_string(json_object_get(body, keys[i])))
            json_object_set(e, keys[i], json_object_get(body, keys[i]));
    return e;
}

/* Writes body to the outbox; *keep_err becomes 0 when it is there
 * (durably), else the errno of the failure. */
static void keep_on_disk(long long job_id, int attempt, const json_t *body, int *keep_err)
{
    *keep_err = hv_state_outbox_put(job_id, attempt, body) == 0 ? 0 : (errno ? errno : EIO);
}

/* Sends body of (job_id, attempt) until the server answers. keep_err is 0
 * when body is kept in the outbox, else why it could not be: then every
 * failed try writes it again (the disk may have room by now), and a
 * shutdown does not end the tries at once but after STOP_DELIVERY_SECONDS,
 * saying the result is lost when it is neither kept nor delivered. */
static enum hv_delivery send_kept(struct hv_client *c, long long job_id, int attempt, json_t *body,
                                  int keep_err)
{
    double gap = BACKOFF_FIRST, stop_deadline = 0;
    bool warned = false, refused = false;
    json_t *sent = json_incref(body);
    enum hv_delivery out;
    for (;;) {
        enum hv_call call = hv_client_upload_result(c, job_id, sent);
        if (call == HV_CALL_OK) {
            if (warned)
                hv_info("job %lld: result delivered after the server came back", job_id);
            out = refused ? HV_REFUSED : HV_DELIVERED;
            break;
        }
        if (call == HV_CALL_STALE) {
            hv_warn("job %lld: result refused, the attempt is stale (%s)", job_id,
                    hv_client_last_error(c));
            out = HV_STALE;
            break;
        }
        if (call == HV_CALL_AUTH || call == HV_CALL_NOT_FOUND ||
            (call == HV_CALL_REJECTED && refused)) {
            if (keep_err != 0) {
                hv_error("job %lld: result cannot be delivered (%s), and it could not be kept "
                         "on disk (%s)",
                         job_id, hv_client_last_error(c), strerror(keep_err));
                json_decref(sent);
                return HV_UNDELIVERABLE;
            }
            hv_error("job %lld: result cannot be delivered (%s); kept as %s/outbox/%lld-%d.json"
                     ".undeliverable",
                     job_id, hv_client_last_error(c), hv_state_path(), job_id, attempt);
            json_decref(sent);
            hv_state_outbox_abandon(job_id, attempt);
            return HV_UNDELIVERABLE;
        }
        if (call == HV_CALL_REJECTED) {
            hv_error("job %lld: the server refused the result (%s); reporting the job failed "
                     "with that reason",
                     job_id, hv_client_last_error(c));
            json_t *e = refusal_result(sent, hv_client_last_error(c));
            json_decref(sent);
            if (e == NULL)
                return HV_UNDELIVERABLE;
            sent = e;
            refused = true;
            /* When this write fails, a result kept before stays: sent at
             * the next start, it is refused again and replaced then. */
            int err;
            keep_on_disk(job_id, attempt, sent, &err);
            if (err == 0)
                keep_err = 0;
            continue;
        }
        if (keep_err != 0) {
            keep_on_disk(job_id, attempt, sent, &keep_err);
            if (keep_err == 0)
                hv_info("job %lld: the result is now kept in %s/outbox", job_id, hv_state_path());
        }
        if (hv_shutdown_requested() && keep_err == 0) {
            hv_warn("job %lld: shutting down before the server took the result; it is kept in "
                    "%s/outbox and sent at the next start",
                    job_id, hv_state_path());
            json_decref(sent);
            return HV_KEPT;
        }
        double now = hv_monotonic();
        if (hv_shutdown_requested() && stop_deadline == 0) {
            hv_warn("job %lld: shutting down with a result that is only in memory (it cannot be "
                    "kept in %s/outbox: %s); trying to deliver it for up to %.0f s",
                    job_id, hv_state_path(), strerror(keep_err), STOP_DELIVERY_SECONDS);
            stop_deadline = now + STOP_DELIVERY_SECONDS;
            gap = BACKOFF_FIRST;
        } else if (hv_shutdown_requested() && now >= stop_deadline) {
            hv_error("result of job %lld lost: could not keep it in %s/outbox (%s) and the "
                     "server did not take it (%s); the job will run again",
                     job_id, hv_state_path(), strerror(keep_err), hv_client_last_error(c));
            json_decref(sent);
            return HV_LOST;
        }
        bool say = !warned && stop_deadline == 0; /* said once, and not again when stopping */
        if (say && keep_err == 0)
            hv_warn("job %lld: result upload failed (%s); the result is kept in %s/outbox and "
                    "sent again with backoff up to %.0f s until the server takes it",
                    job_id, hv_client_last_error(c), hv_state_path(), BACKOFF_MAX);
        else if (say)
            hv_warn("job %lld: result upload failed (%s); the result is only in memory (it "
                    "cannot be kept in %s/outbox: %s) and sent again with backoff up to %.0f s "
                    "until the server takes it",
                    job_id, hv_client_last_error(c), hv_state_path(), strerror(keep_err),
                    BACKOFF_MAX);
        warned = true;
        double wait = gap;
        if (stop_deadline > 0 && stop_deadline - now < wait)
            wait = stop_deadline - now;
        hv_wake_wait(wait);
        gap = gap * 2 > BACKOFF_MAX ? BACKOFF_MAX : gap * 2;
    }
    json_decref(sent);
    hv_state_outbox_remove(job_id, attempt);
    return out;
}

/* Keeps body in the outbox (saying so when it cannot) and sends it. */
static enum hv_delivery keep_and_send(struct hv_client *c, long long job_id, int attempt,
                                      json_t *body)
{
    int keep_err;
    keep_on_disk(job_id, attempt, body, &keep_err);
    hv_fault("job.kept");
    if (keep_err != 0)
        hv_warn("job %lld: cannot keep the result in %s/outbox (%s); it is held in memory only",
                job_id, hv_state_path(), strerror(keep_err));
    return send_kept(c, job_id, attempt, body, keep_err);
}

enum hv_delivery hv_deliver(struct hv_client *c, long long job_id, int attempt, json_t *body)
{
    if (hv_result_fit(body, &limits) != 0) {
        hv_error("job %lld: the result cannot be made to fit the server's limits (%zu bytes)",
                 job_id, limits.max_bytes);
        char why[160];
        snprintf(why, sizeof why,
                 "it cannot be made to fit the server's limits (%zu bytes, %zu samples) on "
                 "this worker",
                 limits.max_bytes, limits.max_samples);
        json_t *e = refusal_result(body, why);
        if (e == NULL)
            return HV_UNDELIVERABLE;
        enum hv_delivery d = keep_and_send(c, job_id, attempt, e);
        json_decref(e);
        return d == HV_DELIVERED ? HV_REFUSED : d;
    }
    return keep_and_send(c, job_id, attempt, body);
}

int hv_deliver_pending(struct hv_client *c)
{
    json_t *list = hv_state_outbox_list();
    size_t i;
    json_t *e;
    int rc = 0;
    if (json_array_size(list) > 0)
        hv_info("sending %zu result%s kept from before", json_array_size(list),
                json_array_size(list) == 1 ? "" : "s");
    json_array_foreach(list, i, e)
    {
        long long job = json_integer_value(json_object_get(e, "job_id"));
        int attempt = (int)json_integer_value(json_object_get(e, "attempt"));
        json_t *body = hv_state_outbox_load(job, attempt);
        if (body == NULL)
            continue;
        enum hv_delivery d = send_kept(c, job, attempt, body, 0);
        json_decref(body);
        if (d == HV_DELIVERED || d == HV_REFUSED)
            hv_info("job %lld attempt %d: kept result delivered%s", job, attempt,
                    d == HV_REFUSED ? " (refused; the job failed with the reason)" : "");
        if (d == HV_KEPT || d == HV_LOST) {
            rc = -1;
            break;
        }
    }
    json_decref(list);
    return rc;
}
