/* query.h — reading and checking query-string arguments.
 *
 * Each function appends an error under the argument's name when its value
 * does not fit, so a handler checks all its arguments and answers 400 once
 * with every problem. Every reader refuses a value that is not UTF-8 (the
 * error names the argument), so no byte string PostgreSQL would reject
 * reaches a statement; handlers read query values only through these. */
#ifndef HV_SERVER_QUERY_H
#define HV_SERVER_QUERY_H

#include "request.h"

#include <jansson.h>
#include <stdbool.h>

/** An integer argument in [min, max]; *out keeps def when absent. */
void hv_query_int(struct hv_request *req, const char *key, long min, long max, long def, long *out,
                  json_t *errors);

/** A finite number argument in [min, max] (decimal, as strtod reads it);
 *  *present says whether it was given and valid, *out keeps def otherwise. */
void hv_query_number(struct hv_request *req, const char *key, double min, double max, double def,
                     double *out, bool *present, json_t *errors);

/** A string argument that must be one of choices (NULL-terminated);
 *  *out is NULL when absent. */
void hv_query_enum(struct hv_request *req, const char *key, const char *const *choices,
                   const char **out, json_t *errors);

/** A string argument of at most max_len characters; NULL when absent. */
void hv_query_str(struct hv_request *req, const char *key, size_t max_len, const char **out,
                  json_t *errors);

/** An ISO 8601 time argument; NULL when absent. */
void hv_query_time(struct hv_request *req, const char *key, const char **out, json_t *errors);

/** A boolean argument ("1", "true", "0", "false"); *out keeps def. */
void hv_query_bool(struct hv_request *req, const char *key, bool def, bool *out, json_t *errors);

/** Answers 400 with errors and returns true when errors is not empty;
 *  otherwise frees errors and returns false. */
bool hv_query_failed(struct hv_request *req, json_t *errors);

#endif
