/* parse_iperf3.c — iperf3's JSON output (-J), of the client or the server.
 *
 * TCP: net.tcp.gbps is what the receiving side counted (end.sum_received,
 * bits per second / 1e9), the same whichever side saved the output and
 * with -R; net.tcp.retransmits comes from the sender's sum (the client
 * without -R; the server's output has none). UDP: net.udp.gbps,
 * net.udp.jitter_ms and net.udp.loss_pct from end.sum_received (iperf3
 * 3.12), else end.sum (older iperf3). A run iperf3 reports as failed
 * ("error": "unable to connect to server ...") is refused with its
 * message.
 *
 * Every interval's sum (bits per second of all streams, as this side
 * counted them) becomes a sample of the headline metric; the intervals
 * iperf3 flags "omitted" (--omit, its warm-up) are left out, and its
 * timeline restarts at 0 after them.
 *
 * Per stream (end.streams, kept whole in info.streams): TCP's
 * net.tcp.stream_gbps_min and net.tcp.stream_gbps_max (each stream's
 * receiver bits per second, the names of the built-in net engine), and
 * from the sender's side when this output has it net.tcp.rtt_mean_us
 * (the streams' mean RTT, averaged) and net.tcp.rtt_max_us. The MSS of
 * the connection (start.tcp_mss with -M, else the tcp_mss_default iperf3
 * read from its socket) is net.tcp.mss_bytes and info.mss. Who sent
 * (test_start's reverse and bidir) is info.direction: "forward" (the
 * client), "reverse" (-R) or "bidir".
 *
 * A file may hold several outputs one after another (`cat a.json
 * b.json`): one run each.
 *
 * The file ends with the tool's description, its line of lib/tools.def:
 * its engine, hv_engine_def_net_iperf3, and hv_tool_parser_iperf3 (the
 * parser, its signature, what its runs share). */
#include "params.h"
#include "parse_util.h"

#include <stdio.h>
#include <string.h>

#define TOOL "iperf3"

/* The start time, version and test parameters into info. */
static void read_start(const json_t *start, json_t *info, const char **protocol)
{
    const char *version = json_string_value(json_object_get(start, "version"));
    if (version != NULL)
        json_object_set_new(info, "tool_version", json_string(version));
    const json_t *secs = json_object_get(json_object_get(start, "timestamp"), "timesecs");
    char iso[32];
    if (json_is_number(secs) && hv_piso(json_number_value(secs), iso, sizeof iso) == 0)
        json_object_set_new(info, "started_at", json_string(iso));
    json_object_set_new(
        info, "role",
        json_string(json_object_get(start, "accepted_connection") != NULL ? "server" : "client"));
    const json_t *test = json_object_get(start, "test_start");
    if (json_is_object(test)) {
        json_object_set(info, "test_start", (json_t *)test);
        const char *p = json_string_value(json_object_get(test, "protocol"));
        if (p != NULL)
            *protocol = p;
        /* Who sends: -R makes the server send, --bidir both (printed by
         * later iperf3 releases only). */
        const json_t *rev = json_object_get(test, "reverse"),
                     *bidir = json_object_get(test, "bidir");
        if (json_is_number(rev) || json_is_number(bidir))
            json_object_set_new(info, "direction",
                                json_string(json_number_value(bidir) != 0 ? "bidir"
                                            : json_number_value(rev) != 0 ? "reverse"
                                                                          : "forward"));
    }
    const json_t *to = json_object_get(start, "connecting_to");
    if (json_is_object(to))
        json_object_set(info, "connecting_to", (json_t *)to);
    const json_t *mss = json_object_get(start, "tcp_mss");
    if (!json_is_number(mss))
        mss = json_object_get(start, "tcp_mss_default");
    if (json_is_number(mss) && json_number_value(mss) > 0 && json_number_value(mss) < 1e7)
        json_object_set_new(info, "mss", json_integer((json_int_t)json_number_value(mss)));
}

/* end.NAME as an object, or NULL after the error "end.NAME is missing". */
static const json_t *end_sum(const json_t *end, const char *name, char *err, size_t errlen)
{
    const json_t *s = json_object_get(end, name);
    if (json_is_object(s))
        return s;
    hv_perr(err, errlen, TOOL, "end.%s is %s (cut off?)", name,
            s == NULL ? "missing" : "not an object");
    return NULL;
}

/* A number member of end.NAME that must be there. */
static int need_num(const json_t *sum, const char *name, const char *key, double *out, char *err,
                    size_t errlen)
{
    char where[48];
    snprintf(where, sizeof where, "end.%s", name);
    int rc = hv_pjnum(sum, key, where, out, TOOL, err, errlen);
    if (rc > 0)
        return hv_perr(err, errlen, TOOL, "%s.%s is missing", where, key);
    return rc;
}

/* The per-stream figures of TCP (end.streams): the slowest and fastest
 * stream as the receiver counted them, the sender's RTTs when this side
 * has them. The streams are kept whole in info. */
static int read_streams(const json_t *end, json_t *run, char *err, size_t errlen)
{
    const json_t *streams = json_object_get(end, "streams");
    if (streams == NULL)
        return 0;
    if (!json_is_array(streams))
        return hv_perr(err, errlen, TOOL, "end.streams is not an array");
    json_object_set(hv_prun_info(run), "streams", (json_t *)streams);
    double lo = 0, hi = 0, rtt_sum = 0, rtt_max = 0;
    size_t n = 0, n_rtt = 0, i;
    json_t *st;
    json_array_foreach(streams, i, st)
    {
        char where[48];
        snprintf(where, sizeof where, "end.streams[%zu].receiver", i);
        const json_t *recv = json_object_get(st, "receiver");
        double bps, v;
        int rc = hv_pjnum(recv, "bits_per_second", where, &bps, TOOL, err, errlen);
        if (rc != 0 || !json_is_object(recv))
            return rc < 0 ? -1 : hv_perr(err, errlen, TOOL, "%s has no bits_per_second", where);
        if (bps < 0)
            return hv_perr(err, errlen, TOOL, "%s.bits_per_second is negative", where);
        lo = n == 0 || bps < lo ? bps : lo;
        hi = bps > hi ? bps : hi;
        n++;
        snprintf(where, sizeof where, "end.streams[%zu].sender", i);
        const json_t *send = json_object_get(st, "sender");
        rc = hv_pjnum(send, "mean_rtt", where, &v, TOOL, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0 && v >= 0) {
            rtt_sum += v;
            n_rtt++;
        }
        rc = hv_pjnum(send, "max_rtt", where, &v, TOOL, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0 && v > rtt_max)
            rtt_max = v;
    }
    json_t *m = hv_prun_metrics(run);
    int rc = 0;
    if (n > 0) {
        rc |= hv_pmetric(m, "net.tcp.stream_gbps_min", lo / 1e9, "Gbit/s", true);
        rc |= hv_pmetric(m, "net.tcp.stream_gbps_max", hi / 1e9, "Gbit/s", true);
    }
    if (n_rtt > 0) {
        rc |= hv_pmetric(m, "net.tcp.rtt_mean_us", rtt_sum / (double)n_rtt, "us", false);
        rc |= hv_pmetric(m, "net.tcp.rtt_max_us", rtt_max, "us", false);
    }
    return rc == 0 ? 0 : hv_perr(err, errlen, TOOL, "a stream's value is not a finite number");
}

static int read_tcp(const json_t *end, json_t *run, char *err, size_t errlen)
{
    json_t *metrics = hv_prun_metrics(run), *info = hv_prun_info(run);
    const json_t *recv = end_sum(end, "sum_received", err, errlen);
    double bps, secs = 0, retr = 0;
    if (recv == NULL || need_num(recv, "sum_received", "bits_per_second", &bps, err, errlen) != 0)
        return -1;
    if (hv_pjnum(recv, "seconds", "end.sum_received", &secs, TOOL, err, errlen) < 0)
        return -1;
    if (hv_pmetric(metrics, "net.tcp.gbps", bps / 1e9, "Gbit/s", true) != 0)
        return hv_perr(err, errlen, TOOL, "end.sum_received.bits_per_second is not finite");
    const json_t *sent = json_object_get(end, "sum_sent");
    if (json_is_object(sent)) {
        double sbps;
        if (hv_pjnum(sent, "bits_per_second", "end.sum_sent", &sbps, TOOL, err, errlen) < 0)
            return -1;
        int rc = hv_pjnum(sent, "retransmits", "end.sum_sent", &retr, TOOL, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0)
            hv_pmetric(metrics, "net.tcp.retransmits", retr, "count", false);
    }
    if (secs > 0)
        json_object_set_new(info, "duration_s", json_real(secs));
    if (read_streams(end, run, err, errlen) != 0)
        return -1;
    const json_t *mss = json_object_get(info, "mss");
    if (json_is_integer(mss) && hv_pmetric(metrics, "net.tcp.mss_bytes",
                                           (double)json_integer_value(mss), "bytes", true) != 0)
        return hv_perr(err, errlen, TOOL, "the MSS is not a finite number");
    return 0;
}

static int read_udp(const json_t *end, json_t *run, char *err, size_t errlen)
{
    json_t *metrics = hv_prun_metrics(run), *info = hv_prun_info(run);
    const char *name =
        json_is_object(json_object_get(end, "sum_received")) ? "sum_received" : "sum";
    const json_t *sum = end_sum(end, name, err, errlen);
    double bps, jitter = 0, lost = 0, secs = 0;
    if (sum == NULL || need_num(sum, name, "bits_per_second", &bps, err, errlen) != 0)
        return -1;
    if (hv_pmetric(metrics, "net.udp.gbps", bps / 1e9, "Gbit/s", true) != 0)
        return hv_perr(err, errlen, TOOL, "end.%s.bits_per_second is not finite", name);
    if (need_num(sum, name, "jitter_ms", &jitter, err, errlen) != 0 ||
        need_num(sum, name, "lost_percent", &lost, err, errlen) != 0)
        return -1;
    hv_pmetric(metrics, "net.udp.jitter_ms", jitter, "ms", false);
    hv_pmetric(metrics, "net.udp.loss_pct", lost, "%", false);
    char where[32];
    snprintf(where, sizeof where, "end.%s", name);
    if (hv_pjnum(sum, "seconds", where, &secs, TOOL, err, errlen) < 0)
        return -1;
    if (secs > 0)
        json_object_set_new(info, "duration_s", json_real(secs));
    const json_t *streams = json_object_get(end, "streams");
    if (json_is_array(streams))
        json_object_set(info, "streams", (json_t *)streams);
    return 0;
}

/* The intervals array into samples of metric. */
static int read_intervals(const json_t *doc, json_t *run, const char *metric, char *err,
                          size_t errlen)
{
    const json_t *intervals = json_object_get(doc, "intervals");
    if (intervals == NULL)
        return 0;
    if (!json_is_array(intervals))
        return hv_perr(err, errlen, TOOL, "\"intervals\" is not an array");
    struct hv_pseries series = {0};
    size_t i, omitted = 0;
    json_t *iv;
    json_array_foreach(intervals, i, iv)
    {
        const json_t *sum = json_object_get(iv, "sum");
        char where[48];
        snprintf(where, sizeof where, "intervals[%zu].sum", i);
        if (!json_is_object(sum)) {
            hv_pseries_free(&series);
            return hv_perr(err, errlen, TOOL, "%s is not an object", where);
        }
        if (json_is_true(json_object_get(sum, "omitted"))) {
            omitted++;
            continue;
        }
        double v[3];
        static const char *const keys[3] = {"start", "end", "bits_per_second"};
        for (int k = 0; k < 3; k++) {
            int rc = hv_pjnum(sum, keys[k], where, &v[k], TOOL, err, errlen);
            if (rc != 0) {
                hv_pseries_free(&series);
                return rc < 0 ? -1 : hv_perr(err, errlen, TOOL, "%s.%s is missing", where, keys[k]);
            }
        }
        double start = v[0], end = v[1], bps = v[2];
        if (hv_pseries_add(&series, start, end, bps) != 0) {
            hv_pseries_free(&series);
            return hv_perr(err, errlen, TOOL, "out of memory");
        }
    }
    json_object_set_new(hv_prun_info(run), "omitted_intervals", json_integer((json_int_t)omitted));
    if (hv_pseries_emit(&series, run, metric, 0, 1e-9) < 0)
        return hv_perr(err, errlen, TOOL, "an interval's value is not a finite number");
    return 0;
}

/* One iperf3 output (one JSON document) into a new run of runs. */
static int read_output(const json_t *doc, const char *text, json_t *runs, char *err, size_t errlen)
{
    const json_t *start = json_object_get(doc, "start");
    const json_t *end = json_object_get(doc, "end");
    const char *failure = json_string_value(json_object_get(doc, "error"));
    if (failure != NULL) {
        char q[256];
        return hv_perr(err, errlen, TOOL, "the run failed: %s",
                       hv_pquote(q, sizeof q, failure, strlen(failure)));
    }
    if (!json_is_object(start) || !json_is_object(end))
        return hv_pnot_mine(text, "iperf3", TOOL,
                            "no \"start\" and \"end\" objects: not iperf3's JSON output (-J)", err,
                            errlen);
    json_t *run = hv_prun_new(runs, TOOL, "json");
    if (run == NULL)
        return hv_perr(err, errlen, TOOL, "out of memory");
    const char *protocol = "TCP";
    read_start(start, hv_prun_info(run), &protocol);
    int rc;
    if (strcmp(protocol, "UDP") == 0)
        rc = read_udp(end, run, err, errlen);
    else if (strcmp(protocol, "TCP") == 0)
        rc = read_tcp(end, run, err, errlen);
    else
        rc = hv_perr(err, errlen, TOOL, "protocol %.16s is not imported (TCP and UDP are)",
                     protocol);
    if (rc == 0)
        rc = read_intervals(
            doc, run, strcmp(protocol, "UDP") == 0 ? "net.udp.gbps" : "net.tcp.gbps", err, errlen);
    const json_t *cpu = json_object_get(end, "cpu_utilization_percent");
    if (rc == 0 && json_is_object(cpu))
        json_object_set(hv_prun_info(run), "cpu_utilization_percent", (json_t *)cpu);
    return rc;
}

static int parse_iperf3(const char *text, size_t len, json_t *runs, char *err, size_t errlen)
{
    size_t pos = 0;
    int rc = 0;
    for (size_t part = 0; rc == 0; part++) {
        json_t *doc = hv_pjson_next(text, len, &pos, TOOL, err, errlen);
        if (doc == NULL && err[0] == '\0' && part > 0)
            break;
        if (doc == NULL && err[0] == '\0')
            rc = hv_pnot_mine(text, "iperf3", TOOL,
                              "no JSON object in the output: save iperf3's output with -J", err,
                              errlen);
        else if (doc == NULL)
            rc = -1;
        else
            rc = read_output(doc, text, runs, err, errlen);
        json_decref(doc);
        if (rc != 0)
            hv_ppart_err(err, errlen, TOOL, part);
    }
    return rc;
}

/* ---- the description (lib/tools.def) --------------------------------- */

static const char *const sweep_streams[] = {"streams", NULL};

static const struct hv_param_def net_iperf3_params[] = {
    HV_PARAM_NET_PEER,
    HV_PARAM_NET_STREAMS,
    HV_PARAM_NET_WINDOW,
    HV_PARAM_NET_SECONDS,
    {.name = "reverse",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "the peer sends, the target receives (iperf3 -R)"},
    {.name = "udp",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "UDP instead of TCP (iperf3 -u)"},
    HV_PARAM_WARMUP("untimed traffic before the measured time, whole seconds (iperf3 --omit)"),
    {0},
};

static const char *const iperf3_metrics[] = {"net.tcp.gbps", "net.udp.gbps", NULL};

const struct hv_engine_def hv_engine_def_net_iperf3 = {
    .kind = "net",
    .engine = "iperf3",
    .summary = "iperf3 client against an iperf3 server on the peer, JSON output",
    .metrics = iperf3_metrics,
    .sweepable = sweep_streams,
    .needs_peer = true,
    .external = true,
    .params_def = net_iperf3_params,
};

/* Its signatures (hv_parser_guess). */
static bool guess_iperf3(const char *text)
{
    return strstr(text, "\"iperf 3") != NULL || strstr(text, "\"connecting_to\"") != NULL;
}

/* What was run: the side that saved the output, the test's protocol,
 * streams, direction and target bitrate (0: unlimited), and the MSS the
 * client read (-M, else its socket's default). */
static const struct hv_identity_field identity[] = {
    {"role", "role", HV_ID_TEXT, NULL, false},
    {"protocol", "test_start.protocol", HV_ID_TEXT, NULL, false},
    {"streams", "test_start.num_streams", HV_ID_COUNT, NULL, false},
    {"direction", "direction", HV_ID_TEXT, NULL, false},
    {"bitrate", "test_start.target_bitrate", HV_ID_COUNT, NULL, false},
    {"mss", "mss", HV_ID_COUNT, NULL, false},
    {0},
};

/* What else its runs share when they repeat one workload. */
static const char *const alike[] = {"role", "test_start", NULL};

const struct hv_tool_parser hv_tool_parser_iperf3 = {
    .name = "iperf3",
    .display = "iperf3",
    .kind = "net",
    .forms = "JSON (-J) of the client or the server; several one after another",
    .parse = parse_iperf3,
    .guess = guess_iperf3,
    .identity = identity,
    .alike = alike,
    .engine = &hv_engine_def_net_iperf3,
};
