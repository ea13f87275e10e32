/* h_workers.c — worker registration. */
#include "db_targets.h"
#include "handlers.h"
#include "jspec.h"
#include "site_bench.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const target_kinds[] = {"host", "guest", NULL};

static const struct hv_jfield register_fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "kind", .type = HV_J_STRING, .required = true, .choices = target_kinds},
    {.name = "facts", .type = HV_J_OBJECT, .required = true},
    {.name = "fingerprint", .type = HV_J_STRING, .max_len = 128},
    {.name = "version", .type = HV_J_STRING, .max_len = 64},
    {.name = "labels", .type = HV_J_OBJECT},
    {0},
};

void hv_h_worker_register(struct hv_request *req)
{
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    json_t *errors = json_array();
    if (hv_jspec_check(doc, "", register_fields, errors) == 0) {
        hv_jspec_check_labels(json_object_get(doc, "labels"), "/labels", errors);
        hv_site_bench_check_decl(json_object_get(json_object_get(doc, "facts"), "benchmarks"),
                                 "/facts/benchmarks", errors);
    }
    if (json_array_size(errors) > 0 || json_string_length(json_object_get(doc, "name")) == 0) {
        if (json_array_size(errors) == 0)
            hv_errors_add(errors, "/name", "must not be empty");
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "bad registration", errors);
        json_decref(doc);
        return;
    }
    json_decref(errors);
    const json_t *facts = json_object_get(doc, "facts");
    char *facts_text = json_dumps(facts, JSON_COMPACT | JSON_SORT_KEYS);
    const json_t *labels = json_object_get(doc, "labels");
    char *labels_text = labels ? json_dumps(labels, JSON_COMPACT) : NULL;
    const char *uuid = json_string_value(json_object_get(facts, "dmi_product_uuid"));
    int64_t id = 0;
    enum hv_db_status s = hv_db_target_upsert(
        json_string_value(json_object_get(doc, "name")),
        json_string_value(json_object_get(doc, "kind")), facts_text,
        json_string_value(json_object_get(doc, "fingerprint")), uuid, labels_text, &id);
    free(facts_text);
    free(labels_text);
    if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(req, 200,
                      json_pack("{s:I,s:O,s:O}", "target_id", (json_int_t)id, "name",
                                json_object_get(doc, "name"), "fingerprint",
                                json_object_get(doc, "fingerprint")
                                    ? json_object_get(doc, "fingerprint")
                                    : json_null()));
    json_decref(doc);
}
