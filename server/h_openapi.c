/* h_openapi.c — GET /api/v1/openapi.json: the OpenAPI document of this API.
 *
 * The document is api/openapi.json, compiled into the server by the
 * Makefile (tools/embed.sh writes $(BUILD)/gen/openapi_json.c), so the
 * server always serves the contract it was built with and needs no file at
 * run time. */
#include "handlers.h"
#include "log.h"

#include <pthread.h>
#include <stddef.h>

/* Defined in the generated $(BUILD)/gen/openapi_json.c. */
extern const unsigned char hv_openapi_json[];
extern const size_t hv_openapi_json_len;

static pthread_once_t parse_once = PTHREAD_ONCE_INIT;
/* Parsed on first use and kept for the life of the process; NULL when the
 * embedded text does not parse (a build error the contract test catches). */
static json_t *openapi_doc;

static void parse_openapi(void)
{
    json_error_t err;
    openapi_doc = json_loadb((const char *)hv_openapi_json, hv_openapi_json_len,
                             JSON_REJECT_DUPLICATES, &err);
    if (openapi_doc == NULL)
        hv_error("the embedded OpenAPI document does not parse: line %d: %s", err.line, err.text);
}

void hv_h_openapi(struct hv_request *req)
{
    pthread_once(&parse_once, parse_openapi);
    if (openapi_doc == NULL) {
        hv_reply_problem(req, HV_E_INTERNAL, "the embedded OpenAPI document is broken", NULL);
        return;
    }
#if JANSSON_VERSION_HEX >= 0x020b00
    /* Since jansson 2.11 dumping a value is thread safe and reference
     * counts are atomic, so every server thread may answer with the one
     * parsed document. */
    hv_reply_json(req, 200, json_incref(openapi_doc));
#else
    /* Older jansson marks values while dumping them: each answer gets its
     * own copy. */
    hv_reply_json(req, 200, json_deep_copy(openapi_doc));
#endif
}
