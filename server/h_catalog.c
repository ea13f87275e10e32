/* h_catalog.c — what plans may name: tuning factors and engines. */
#include "factors.h"
#include "handlers.h"
#include "params.h"

void hv_h_catalog(struct hv_request *req)
{
    hv_reply_json(
        req, 200,
        json_pack("{s:o,s:o}", "factors", hv_factors_json(), "engines", hv_engines_json()));
}
