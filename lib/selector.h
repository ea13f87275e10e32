/* selector.h — label selectors: "pool=batch,cpu=epyc" picks the targets
 * whose labels hold every pair given (all must match).
 *
 * One grammar for every place that picks targets by label: a plan's
 * guests.label, GET /api/v1/targets?label=, the CLI. A key is 1 to 64
 * bytes without space, control characters, ',' or '='; a value, what
 * follows the key's '=', 1 to 128 bytes other than ','; pairs are
 * separated by ',' (a space before a key is refused, so a selector reads
 * the same in a URL and a plan). A key may appear once. Labels an
 * administrator sets are stricter (hv_label_key_ok(): A-Z a-z 0-9 _ . - /;
 * hv_label_value_ok(): printable, no space, ',' or '='); a worker's own
 * --label keys and values are taken as given, and a selector can name any
 * of them that has no ',' (nor, in a key, a space). */
#ifndef HV_SELECTOR_H
#define HV_SELECTOR_H

#include <jansson.h>
#include <stddef.h>

/** The most pairs a selector holds. */
#define HV_SELECTOR_MAX_PAIRS 16

/** Parses text into a new JSON object key → value (the form a target's
 *  labels are stored in, so the database matches it with @>). Returns the
 *  object, or NULL with why in err (len bytes). */
json_t *hv_selector_parse(const char *text, char *err, size_t len);

/** Whether a label key is well formed (the grammar above). */
int hv_label_key_ok(const char *key);

/** Whether a label value is well formed. */
int hv_label_value_ok(const char *value);

/** Checks labels as an administrator sets them or a selector object names
 *  them (a JSON object): each key hv_label_key_ok(), each value a string
 *  hv_label_value_ok(). Appends one error per problem under path + "/" +
 *  key. */
void hv_labels_check(const json_t *labels, const char *path, json_t *errors);

#endif
