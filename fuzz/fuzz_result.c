/* fuzz_result.c — a result upload (POST /api/v1/jobs/{id}/result) as the
 * server checks it, through hv_result_body_check() (lib/result.h): every
 * problem under a JSON path, none for a body it accepts. */
#include "fuzz.h"

#include "result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = fuzz_json_body(data, size);
    if (doc == NULL)
        return 0;
    json_t *errors = json_array();
    int rc = hv_result_body_check(doc, errors);
    fuzz_check_errors(errors, rc != 0);
    json_decref(errors);
    json_decref(doc);
    return 0;
}
