/* test_request.c — handlers called on requests built here, without the
 * HTTP daemon or a database: the request API (server/request.c), the
 * answers it builds, and handlers that need neither. */
#include "check.h"
#include "server/handlers.h"
#include "server/query.h"
#include "server/db.h"
#include "server/request.h"

#include <strings.h>

/* A request as the HTTP layer would hand it over; body may be NULL. */
static struct hv_request *make(const char *method, const char *url, const char *body)
{
    struct hv_request *req = calloc(1, sizeof *req);
    req->method = method;
    req->url = url;
    if (body != NULL) {
        req->body = strdup(body);
        req->body_len = req->body_cap = strlen(body);
    }
    return req;
}

static const char *problem_code(const struct hv_request *req)
{
    return json_string_value(json_object_get(req->reply, "code"));
}

static void test_lookups(void)
{
    struct hv_request *req = make("GET", "/api/v1/plans", NULL);
    CHECK(hv_req_kv_add(&req->query, "status", "done") == 0);
    CHECK(hv_req_kv_add(&req->query, "limit", "5") == 0);
    CHECK(hv_req_kv_add(&req->headers, "Idempotency-Key", "abc") == 0);
    for (int i = 0; i < 40; i++) /* past the first allocation */
        CHECK(hv_req_kv_add(&req->headers, "X-Filler", "x") == 0);
    CHECK(strcmp(hv_req_query(req, "status"), "done") == 0);
    CHECK(strcmp(hv_req_query(req, "limit"), "5") == 0);
    CHECK(hv_req_query(req, "Status") == NULL); /* query keys are case sensitive */
    CHECK(hv_req_query(req, "missing") == NULL);
    CHECK(strcmp(hv_req_header(req, "idempotency-key"), "abc") == 0);
    CHECK(hv_req_header(req, "Authorization") == NULL);
    hv_request_free(req);
}

static void test_answers(void)
{
    struct hv_request *req = make("POST", "/api/v1/plans", "{\"a\": 1, \"a\": 2}");
    CHECK(hv_req_json(req) == NULL);
    CHECK(req->status == 400);
    CHECK(strcmp(problem_code(req), "bad_json") == 0);
    CHECK(strcmp(req->content_type, "application/problem+json") == 0);
    /* The last answer set is the one sent. */
    hv_reply_json(req, 200, json_pack("{s:i}", "x", 1));
    CHECK(req->status == 200 && strcmp(req->content_type, "application/json") == 0);
    hv_reply_db_failure(req, HV_DB_UNAVAILABLE);
    CHECK(req->status == 503 && strcmp(problem_code(req), "db_unavailable") == 0);
    hv_request_free(req);

    req = make("POST", "/api/v1/plans", NULL);
    CHECK(hv_req_json(req) == NULL && req->status == 400);
    hv_request_free(req);
}

static void test_handlers(void)
{
    struct hv_request *req = make("GET", "/healthz", NULL);
    hv_h_healthz(req);
    CHECK(req->status == 200 && strcmp(req->content_type, "application/json") == 0);
    const char *text = req->fixed != NULL ? req->fixed->text : NULL;
    json_t *health = text != NULL ? json_loads(text, 0, NULL) : NULL;
    const char *status = json_string_value(json_object_get(health, "status"));
    CHECK_MSG(status != NULL && strcmp(status, "ok") == 0, "answer %s",
              text != NULL ? text : "(none)");
    json_decref(health);
    hv_request_free(req);

    req = make("GET", "/api/v1/catalog", NULL);
    hv_h_catalog(req);
    CHECK(req->status == 200);
    json_t *factors = json_object_get(req->reply, "factors");
    CHECK_MSG(json_array_size(factors) >= 20, "%zu factors", json_array_size(factors));
    hv_request_free(req);

    /* A malformed plan is refused before any database is asked. */
    req = make("POST", "/api/v1/plans", "{\"name\": 5}");
    hv_h_plans_create(req);
    CHECK_MSG(req->status == 400, "status %u", req->status);
    CHECK(strcmp(problem_code(req), "invalid_plan") == 0);
    CHECK(json_array_size(json_object_get(req->reply, "errors")) > 0);
    hv_request_free(req);

    req = make("POST", "/api/v1/plans", "{}");
    CHECK(hv_req_kv_add(&req->query, "dry_run", "perhaps") == 0);
    hv_h_plans_create(req);
    CHECK_MSG(req->status == 400, "status %u", req->status);
    hv_request_free(req);
}

/* Bodies that do not fit their spec are refused before any database is
 * asked, with every problem at its path and each handler's own detail. */
static void test_bodies(void)
{
    static const struct {
        void (*handler)(struct hv_request *);
        const char *body;
        const char *detail;
        const char *errors; /* compact JSON */
    } cases[] = {
        {hv_h_job_heartbeat, "{\"attempt\":0,\"x\":1}", "the request body does not fit",
         "[{\"path\":\"/attempt\",\"message\":\"must be between 1 and 1e+09\"},"
         "{\"path\":\"/x\",\"message\":\"is not a known member\"}]"},
        {hv_h_job_ready, "{\"attempt\":1,\"endpoint\":{\"host\":\"h\",\"port\":0}}",
         "the request body does not fit",
         "[{\"path\":\"/endpoint/port\",\"message\":\"must be between 1 and 65535\"}]"},
        {hv_h_job_release, "{\"reason\":5}", "the request body does not fit",
         "[{\"path\":\"/attempt\",\"message\":\"is required\"},"
         "{\"path\":\"/reason\",\"message\":\"must be a string, not integer\"}]"},
        {hv_h_step_result,
         "{\"attempt\":1,\"status\":\"ok\",\"changes\":[{\"factor\":\"f\",\"at\":\"soon\"}]}",
         "the request body does not fit",
         "[{\"path\":\"/changes/0\",\"message\":\"at: must be an ISO 8601 UTC time\"}]"},
        {hv_h_job_telemetry,
         "{\"attempt\":1,\"status\":\"ok\",\"samples\":[{\"metric\":\"host.cpu\",\"t\":0,"
         "\"value\":1}]}",
         "the telemetry does not fit",
         "[{\"path\":\"/t0\",\"message\":\"samples need t0, the time of t = 0\"}]"},
        {hv_h_worker_register, "{\"name\":\"\",\"kind\":\"host\",\"facts\":{}}", "bad registration",
         "[{\"path\":\"/name\",\"message\":\"must not be empty\"}]"},
        {hv_h_tokens_create, "{\"name\":\"\",\"role\":\"read\"}", "bad token request",
         "[{\"path\":\"/name\",\"message\":\"must not be empty\"}]"},
        {hv_h_import, "{\"tool\":\"fio\",\"target\":\"a/b\",\"output\":\"\"}",
         "the import request does not fit",
         "[{\"path\":\"/target\",\"message\":\"must be 1 to 128 printable characters without "
         "'/'\"},{\"path\":\"/output\",\"message\":\"must not be empty\"}]"},
        {hv_h_purge, "{\"before\":\"soon\"}", "bad purge request",
         "[{\"path\":\"/before\",\"message\":\"must be an ISO 8601 time (2026-01-31T00:00:00Z)\"},"
         "{\"path\":\"\",\"message\":\"name what to purge: plans, samples and/or raw\"}]"},
        {hv_h_webhooks_create, "{\"url\":\"ftp://h\",\"events\":[]}", "bad webhook subscription",
         "[{\"path\":\"/url\",\"message\":\"must be an http:// or https:// URL\"},"
         "{\"path\":\"/events\",\"message\":\"must name at least one event\"}]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hv_request *req = make("POST", "/api/v1/x", cases[i].body);
        cases[i].handler(req);
        char *errors = json_dumps(json_object_get(req->reply, "errors"), JSON_COMPACT);
        const char *detail = json_string_value(json_object_get(req->reply, "detail"));
        CHECK_MSG(req->status == 400, "%s: status %u", cases[i].body, req->status);
        CHECK_MSG(detail != NULL && strcmp(detail, cases[i].detail) == 0, "%s: %s", cases[i].body,
                  detail);
        CHECK_MSG(errors != NULL && strcmp(errors, cases[i].errors) == 0, "%s: %s", cases[i].body,
                  errors);
        free(errors);
        hv_request_free(req);
    }
}

/* hv_reply_one, hv_reply_items and hv_reply_heartbeat by database status. */
static void test_lookup_answers(void)
{
    struct hv_request *req = make("GET", "/api/v1/x/1", NULL);
    hv_reply_one(req, HV_DB_OK, json_pack("{s:i}", "id", 1), "no x with this id");
    CHECK(req->status == 200 && json_integer_value(json_object_get(req->reply, "id")) == 1);
    hv_reply_one(req, HV_DB_NONE, NULL, "no x with this id");
    CHECK(req->status == 404 && strcmp(problem_code(req), "not_found") == 0);
    CHECK(strcmp(json_string_value(json_object_get(req->reply, "detail")), "no x with this id") ==
          0);
    hv_reply_items(req, HV_DB_OK, json_pack("[i]", 7), NULL);
    CHECK(req->status == 200 && json_array_size(json_object_get(req->reply, "items")) == 1);
    hv_reply_items(req, HV_DB_NONE, NULL, "no x with this id");
    CHECK(req->status == 404);
    hv_reply_items(req, HV_DB_UNAVAILABLE, json_array(), NULL);
    CHECK(req->status == 503 && strcmp(problem_code(req), "db_unavailable") == 0);
    hv_reply_heartbeat(req, HV_DB_OK, 60, true, "gone");
    CHECK(req->status == 200 &&
          json_integer_value(json_object_get(req->reply, "lease_seconds")) == 60);
    CHECK(json_is_true(json_object_get(req->reply, "cancel")));
    CHECK(json_is_string(json_object_get(req->reply, "server_time")));
    hv_reply_heartbeat(req, HV_DB_NONE, 60, false, "gone");
    CHECK(req->status == 409 && strcmp(problem_code(req), "stale_attempt") == 0);
    CHECK(strcmp(json_string_value(json_object_get(req->reply, "detail")), "gone") == 0);
    hv_request_free(req);
}

/* hv_query_number: a finite decimal within its bounds, else an error
 * under its name and the default kept. */
static void test_query_number(void)
{
    static const struct {
        const char *v;
        bool ok;
        double x;
    } cases[] = {
        {"2450", true, 2450},     {"-0.5", true, -0.5}, {"1e3", true, 1000}, {"10000", true, 10000},
        {"-10000", true, -10000}, {" 5", true, 5}, /* as strtol */
        {"10000.001", false, 0},  {"", false, 0},       {"12abc", false, 0}, {"nan", false, 0},
        {"inf", false, 0},        {"-inf", false, 0},   {"1e400", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hv_request *req = make("GET", "/api/v1/jobs/1/samples", NULL);
        CHECK(hv_req_kv_add(&req->query, "from", cases[i].v) == 0);
        json_t *errors = json_array();
        double x;
        bool present;
        hv_query_number(req, "from", -1e4, 1e4, 7, &x, &present, errors);
        CHECK(present == cases[i].ok);
        CHECK(json_array_size(errors) == (cases[i].ok ? 0u : 1u));
        CHECK(x == (cases[i].ok ? cases[i].x : 7));
        json_decref(errors);
        hv_request_free(req);
    }
    struct hv_request *req = make("GET", "/api/v1/jobs/1/samples", NULL);
    json_t *errors = json_array();
    double x;
    bool present = true;
    hv_query_number(req, "from", -1, 1, 3, &x, &present, errors);
    CHECK(!present && x == 3 && json_array_size(errors) == 0); /* absent */
    json_decref(errors);
    hv_request_free(req);
}

int main(void)
{
    test_lookups();
    test_query_number();
    test_answers();
    test_handlers();
    test_bodies();
    test_lookup_answers();
    return check_summary("test_request");
}
