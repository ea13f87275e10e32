/* test_worker_client.c — the address a worker announces when it serves a
 * net workload: the source address of its route to the server, or what
 * --advertise says; and, against a stand-in server on loopback, a claim
 * that hands out a job or a tuning step, the step's heartbeat and
 * result calls, and a result upload that brings the next job. */
#include "tests/unit/check.h"
#include "worker/client.h"

#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>

static volatile sig_atomic_t never;

static void test_route_address(void)
{
    char buf[256];
    struct hv_client *c = hv_client_new("http://127.0.0.1:9/", "t", 0, &never);
    CHECK(c != NULL);
    CHECK(hv_client_local_address(c, buf, sizeof buf) == 0);
    CHECK_STR(buf, "127.0.0.1"); /* loopback is reached from loopback */
    hv_client_free(c);

    c = hv_client_new("http://[::1]:9/", "t", 0, &never);
    CHECK(c != NULL);
    if (hv_client_local_address(c, buf, sizeof buf) == 0)
        CHECK_STR(buf, "::1");
    else /* a machine without IPv6 says why */
        CHECK_MSG(buf[0] != '\0', "no reason given");
    hv_client_free(c);

    c = hv_client_new("http://host.invalid:9/", "t", 0, &never);
    CHECK(c != NULL);
    CHECK(hv_client_local_address(c, buf, sizeof buf) == -1);
    CHECK_MSG(strstr(buf, "host.invalid") != NULL, "the reason names the host: %s", buf);
    hv_client_free(c);
}

static void test_advertise(void)
{
    char buf[256];
    struct hv_client *c = hv_client_new("http://host.invalid:9/", "t", 0, &never);
    CHECK(c != NULL);
    CHECK(hv_client_set_advertise(c, "bench-net.example") == 0);
    CHECK(hv_client_local_address(c, buf, sizeof buf) == 0);
    CHECK_STR(buf, "bench-net.example"); /* no lookup: the administrator knows */
    CHECK(hv_client_set_advertise(c, "192.0.2.7") == 0);
    CHECK(hv_client_local_address(c, buf, sizeof buf) == 0);
    CHECK_STR(buf, "192.0.2.7");
    hv_client_free(c);
}

/* ---- a stand-in server: answers every request with the canned reply and
 * keeps what the last request was. -------------------------------------- */

static struct {
    pthread_mutex_t mu;
    char path[256], auth[256], body[8192], claim[16]; /* claim: the ?claim= argument */
    int status;
    char reply[8192];
} srv = {.mu = PTHREAD_MUTEX_INITIALIZER};

struct upload {
    char buf[8192];
    size_t n;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **state)
{
    (void)cls, (void)method, (void)version;
    struct upload *u = *state;
    if (u == NULL) {
        *state = calloc(1, sizeof *u);
        return *state != NULL ? MHD_YES : MHD_NO;
    }
    if (*size > 0) {
        size_t take = *size < sizeof u->buf - 1 - u->n ? *size : sizeof u->buf - 1 - u->n;
        memcpy(u->buf + u->n, data, take);
        u->n += take;
        *size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&srv.mu);
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    const char *claim = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "claim");
    snprintf(srv.claim, sizeof srv.claim, "%s", claim != NULL ? claim : "");
    snprintf(srv.path, sizeof srv.path, "%s", url);
    snprintf(srv.auth, sizeof srv.auth, "%s", auth != NULL ? auth : "");
    snprintf(srv.body, sizeof srv.body, "%.*s", (int)u->n, u->buf);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(srv.reply), srv.reply, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)srv.status, r);
    pthread_mutex_unlock(&srv.mu);
    MHD_destroy_response(r);
    return rc;
}

static void done(void *cls, struct MHD_Connection *conn, void **state,
                 enum MHD_RequestTerminationCode code)
{
    (void)cls, (void)conn, (void)code;
    free(*state);
}

static void reply(int status, const char *body)
{
    pthread_mutex_lock(&srv.mu);
    srv.status = status;
    snprintf(srv.reply, sizeof srv.reply, "%s", body);
    pthread_mutex_unlock(&srv.mu);
}

/* The last request's body member name as compact JSON. */
static char *sent(const char *member)
{
    json_t *b = check_json(srv.body);
    char *s = json_dumps(json_object_get(b, member), JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(b);
    return s;
}

static const char *step_answer =
    "{\"step\": {\"id\": 5, \"kind\": \"apply\", \"plan_id\": 3, \"attempt\": 1, "
    "\"lease_seconds\": 60, \"block\": 2, \"configuration\": \"vcpu_pin=on,thp=never\", "
    "\"levels\": {\"vcpu_pin\": \"on\", \"thp\": \"never\", \"disk_cache\": "
    "\"writeback\"}, \"domains\": [\"vm0\", \"vm1\"], \"disk\": \"/dev/sda\", "
    "\"nic\": null, \"allow_restart\": false}, \"server_time\": "
    "\"2026-01-01T00:00:00Z\"}";

static void test_claim_step(struct hv_client *c)
{
    struct hv_claim claim;
    reply(200, step_answer);
    CHECK(hv_client_claim_work(c, 9, 0, &claim) == HV_CALL_OK);
    CHECK_STR(srv.path, "/api/v1/jobs/claim");
    char *t = sent("target_id");
    CHECK_STR(t, "9");
    free(t);
    CHECK(claim.what == HV_CLAIMED_STEP);
    const struct hv_step *s = &claim.step;
    CHECK(s->id == 5 && s->attempt == 1 && s->plan_id == 3 && s->block == 2);
    CHECK(s->lease_seconds == 60 && !s->allow_restart);
    CHECK_STR(s->kind, "apply");
    CHECK_STR(s->configuration, "vcpu_pin=on,thp=never");
    CHECK(json_object_size(s->levels) == 3);
    CHECK_STR(json_string_value(json_object_get(s->levels, "thp")), "never");
    CHECK(json_array_size(s->domains) == 2);
    CHECK_STR(s->disk, "/dev/sda");
    CHECK(s->nic == NULL);
    CHECK(s->clock.valid);
    hv_claim_clear(&claim);

    /* A restore names no levels or domains: both read as empty. */
    reply(200, "{\"step\": {\"id\": 6, \"kind\": \"restore\", \"plan_id\": 3, "
               "\"attempt\": 2, \"allow_restart\": true}}");
    CHECK(hv_client_claim_work(c, 9, 0, &claim) == HV_CALL_OK);
    CHECK(claim.what == HV_CLAIMED_STEP && claim.step.allow_restart);
    CHECK(json_is_object(claim.step.levels) && json_object_size(claim.step.levels) == 0);
    CHECK(json_is_array(claim.step.domains) && json_array_size(claim.step.domains) == 0);
    CHECK(claim.step.disk == NULL && claim.step.lease_seconds == 60);
    hv_claim_clear(&claim);

    /* The job-only claim does not run a step. */
    struct hv_job job;
    reply(200, step_answer);
    CHECK(hv_client_claim(c, 9, 0, &job) == HV_CALL_RETRY);
    CHECK_MSG(strstr(hv_client_last_error(c), "tuning step") != NULL, "%s",
              hv_client_last_error(c));
}

static void test_claim_bad_steps(struct hv_client *c)
{
    static const char *const bad[][2] = {
        {"{\"step\": {\"id\": 5, \"kind\": \"reboot\", \"plan_id\": 3, \"attempt\": 1, "
         "\"levels\": {}}}",
         "step.kind must be apply, restore, before_host or after_host"},
        {"{\"step\": {\"id\": 5, \"kind\": \"apply\", \"plan_id\": 3, \"attempt\": 1}}",
         "an apply step needs levels"},
        {"{\"step\": {\"id\": 5, \"kind\": \"apply\", \"plan_id\": 3, \"attempt\": 1, "
         "\"levels\": [\"thp\"]}}",
         "step.levels must be an object"},
        {"{\"step\": {\"id\": 5, \"kind\": \"apply\", \"plan_id\": 3, \"attempt\": 1, "
         "\"levels\": {}, \"domains\": [\"vm0\", 7]}}",
         "step.domains must be an array of domain names"},
        {"{\"step\": {\"id\": 5, \"kind\": \"apply\", \"plan_id\": 3, \"attempt\": 1, "
         "\"levels\": {}, \"disk\": 8}}",
         "step.disk and step.nic must be strings or null"},
        {"{\"step\": {\"id\": 5, \"kind\": \"apply\", \"plan_id\": 3, \"attempt\": 1, "
         "\"levels\": {}, \"allow_restart\": \"yes\"}}",
         "step.allow_restart must be a boolean"},
        {"{\"step\": {\"kind\": \"apply\", \"plan_id\": 3, \"attempt\": 1}}", "id"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct hv_claim claim;
        reply(200, bad[i][0]);
        CHECK_MSG(hv_client_claim_work(c, 9, 0, &claim) == HV_CALL_RETRY, "%s", bad[i][0]);
        CHECK_MSG(strstr(hv_client_last_error(c), bad[i][1]) != NULL, "%s: %s", bad[i][0],
                  hv_client_last_error(c));
        hv_claim_clear(&claim);
    }
}

static void test_claim_job(struct hv_client *c)
{
    struct hv_claim claim;
    reply(200, "{\"job\": {\"id\": 40, \"attempt\": 1, \"plan_id\": 3, \"levels\": "
               "{\"process_pin\": \"on\"}, \"workload\": {\"id\": \"cpu\", \"kind\": "
               "\"cpu\"}}}");
    CHECK(hv_client_claim_work(c, 9, 0, &claim) == HV_CALL_OK);
    CHECK(claim.what == HV_CLAIMED_JOB && claim.job.id == 40);
    CHECK_STR(json_string_value(json_object_get(claim.job.levels, "process_pin")), "on");
    CHECK_STR(claim.job.engine, "builtin");
    hv_claim_clear(&claim);
    struct hv_job job;
    reply(200, "{\"job\": {\"id\": 41, \"attempt\": 1, \"workload\": {\"kind\": "
               "\"disk\"}}}");
    CHECK(hv_client_claim(c, 9, 0, &job) == HV_CALL_OK);
    CHECK(job.id == 41 && job.levels == NULL);
    hv_job_clear(&job);
    reply(204, "");
    CHECK(hv_client_claim_work(c, 9, 0, &claim) == HV_CALL_NO_WORK);
}

static void test_step_calls(struct hv_client *c)
{
    struct hv_step step = {.id = 5, .attempt = 3, .kind = "apply"};
    CHECK(hv_client_use_credential(c, "hvw_abc") == 0);
    reply(200, "{\"lease_seconds\": 90}");
    int lease = 60;
    CHECK(hv_client_step_heartbeat(c, &step, &lease) == HV_CALL_OK);
    CHECK(lease == 90);
    CHECK_STR(srv.path, "/api/v1/steps/5/heartbeat");
    CHECK_STR(srv.auth, "Bearer hvw_abc");
    CHECK_STR(srv.body, "{\"attempt\":3}");

    json_t *body = check_json("{\"status\": \"ok\", \"settings\": {}, \"changes\": []}");
    reply(201, "{}");
    CHECK(hv_client_step_result(c, &step, body) == HV_CALL_OK);
    CHECK_STR(srv.path, "/api/v1/steps/5/result");
    char *a = sent("attempt"), *st = sent("status");
    CHECK_STR(a, "3");
    CHECK_STR(st, "\"ok\"");
    free(a), free(st);
    CHECK(json_object_get(body, "attempt") == NULL); /* the caller's body is left alone */
    reply(409, "{\"title\": \"stale attempt\"}");
    CHECK(hv_client_step_result(c, &step, body) == HV_CALL_STALE);
    reply(404, "{}");
    CHECK(hv_client_step_heartbeat(c, &step, &lease) == HV_CALL_NOT_FOUND);
    json_decref(body);
}

/* A result upload that also claims the next job (?claim=true): asked only
 * when turned on, with no job held and no shutdown signal; the job the
 * answer brings is held for hv_client_take_next(), once. */
static void test_upload_claims_next(const char *url)
{
    static volatile sig_atomic_t stop;
    struct hv_client *c = hv_client_new(url, "hvt_worker", 0, &stop);
    json_t *body = check_json("{\"attempt\": 1, \"status\": \"ok\"}");
    struct hv_claim claim;
    static const char with_next[] =
        "{\"job_id\": 40, \"attempt\": 1, \"result_id\": 7, \"stored\": true, "
        "\"server_time\": \"2026-01-01T00:00:00Z\", \"next\": {\"job\": {\"id\": 42, "
        "\"attempt\": 2, \"lease_seconds\": 90, \"workload\": {\"kind\": \"cpu\"}}}}";
    reply(201, with_next);
    CHECK(hv_client_upload_result(c, 40, body) == HV_CALL_OK);
    CHECK_STR(srv.path, "/api/v1/jobs/40/result");
    CHECK_STR(srv.claim, ""); /* off until turned on */
    CHECK(!hv_client_take_next(c, &claim));

    hv_client_claim_with_results(c, true);
    CHECK(hv_client_upload_result(c, 40, body) == HV_CALL_OK);
    CHECK_STR(srv.claim, "true");
    CHECK(hv_client_upload_result(c, 40, body) == HV_CALL_OK);
    CHECK_STR(srv.claim, ""); /* one job held: the next upload asks for none */
    CHECK(hv_client_take_next(c, &claim));
    CHECK(claim.what == HV_CLAIMED_JOB && claim.job.id == 42 && claim.job.attempt == 2);
    CHECK(claim.job.lease_seconds == 90);
    CHECK_STR(claim.job.kind, "cpu");
    CHECK(claim.job.clock.valid &&
          claim.job.clock.samples == 1); /* the answer's server_time is a clock sample */
    hv_claim_clear(&claim);
    CHECK(!hv_client_take_next(c, &claim)); /* taken once */

    reply(201, "{\"job_id\": 40, \"attempt\": 1, \"result_id\": 7, \"stored\": true, "
               "\"server_time\": \"2026-01-01T00:00:00Z\", \"next\": null}");
    CHECK(hv_client_upload_result(c, 40, body) == HV_CALL_OK);
    CHECK_STR(srv.claim, "true");
    CHECK(!hv_client_take_next(c, &claim)); /* none to bring */
    reply(409, "{\"title\": \"stale attempt\"}");
    CHECK(hv_client_upload_result(c, 40, body) == HV_CALL_STALE);
    CHECK(!hv_client_take_next(c, &claim));

    stop = 1; /* a shutdown signal: no next job is asked for */
    reply(201, with_next);
    CHECK(hv_client_upload_result(c, 40, body) == HV_CALL_OK);
    CHECK_STR(srv.claim, "");
    CHECK(!hv_client_take_next(c, &claim));
    json_decref(body);
    hv_client_free(c);
}

static void test_protocol(void)
{
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer, NULL,
                         MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
    CHECK(d != NULL);
    if (d == NULL)
        return;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u", (unsigned)info->port);
    struct hv_client *c = hv_client_new(url, "hvt_worker", 0, &never);
    test_claim_step(c);
    test_claim_bad_steps(c);
    test_claim_job(c);
    test_step_calls(c);
    hv_client_free(c);
    test_upload_claims_next(url);
    MHD_stop_daemon(d);
}

int main(void)
{
    test_route_address();
    test_advertise();
    test_protocol();
    return check_summary("test_worker_client");
}
