/* jspec.h — declarative validation of JSON objects.
 *
 * A request type declares its members once, as a table of hv_jfield rows;
 * hv_jspec_check() validates an object against the table and reports every
 * problem at once, each under its JSON Pointer path, so a client fixes all
 * of them in one round trip. A row may also say where its value goes (a
 * member of a destination struct, HV_JTO); hv_jspec_bind() then copies the
 * values there, with the row's default for an absent member, so a handler
 * reads its body once. */
#ifndef HV_JSPEC_H
#define HV_JSPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The JSON type a member must have. */
enum hv_jtype {
    HV_J_STRING,
    HV_J_INTEGER,
    HV_J_NUMBER, /**< integer or real */
    HV_J_BOOL,
    HV_J_OBJECT,
    HV_J_ARRAY,
    HV_J_ANY,
};

/** The C type of a row's destination (set by HV_JTO from the member's
 *  declared type). */
enum hv_jdest {
    HV_JD_NONE = 0, /**< not bound */
    HV_JD_STRING,   /**< const char *: the string (borrowed from the object) */
    HV_JD_INT64,    /**< int64_t */
    HV_JD_INT,      /**< int */
    HV_JD_DOUBLE,   /**< double */
    HV_JD_BOOL,     /**< bool */
    HV_JD_JSON,     /**< const json_t *: the member itself, NULL when absent */
};

/** In a row's initializer: bind the member to field of struct T, whose
 *  type says how (enum hv_jdest); any other type does not compile. */
#define HV_JTO(T, field)                                                                           \
    .to = offsetof(T, field),                                                                      \
    .dest = _Generic(((T *)0)->field,                                                              \
        const char *: HV_JD_STRING,                                                                \
        int64_t: HV_JD_INT64,                                                                      \
        int: HV_JD_INT,                                                                            \
        double: HV_JD_DOUBLE,                                                                      \
        bool: HV_JD_BOOL,                                                                          \
        const json_t *: HV_JD_JSON)

/** One member of an object. A table of these ends with a row whose name is
 *  NULL. */
struct hv_jfield {
    const char *name;
    enum hv_jtype type;
    bool required;
    /** For strings: the allowed values, NULL-terminated, or NULL for any. */
    const char *const *choices;
    /** For numbers: the inclusive range, used when min < max. */
    double min, max;
    /** For strings and arrays: the greatest length, 0 for the default (256
     *  characters for strings, no limit for arrays). */
    size_t max_len;
    /** Where hv_jspec_bind() puts the value: set both with HV_JTO. */
    size_t to;
    enum hv_jdest dest;
    /** For an absent member: the value bound to a number, integer or
     *  boolean destination (non-zero is true) ... */
    double def;
    /** ... and to a string destination (NULL unless given). */
    const char *def_str;
};

/** Checks that obj is an object whose members match fields: required
 *  members present, types, choices, ranges, lengths, and no unknown
 *  members. Appends one {"path","message"} per problem to errors; path is
 *  obj's own JSON Pointer (e.g. "/workloads/0"). Returns the number of
 *  problems found. */
int hv_jspec_check(const json_t *obj, const char *path, const struct hv_jfield *fields,
                   json_t *errors);

/** Copies the members of obj that fields bind (HV_JTO) into the struct at
 *  dest, and each absent one's default (def, def_str; NULL for a JSON
 *  destination). Strings and JSON values are borrowed from obj. Checks
 *  nothing: a member of another type than its row's reads as the
 *  default's zero (NULL, 0, false), so call it on a checked object. */
void hv_jspec_bind(const json_t *obj, const struct hv_jfield *fields, void *dest);

/** hv_jspec_check(), then hv_jspec_bind() into dest (NULL: no binding)
 *  when obj is an object, whether or not it fits, so further checks can
 *  read the bound values. Returns the number of problems found. */
int hv_jspec_parse(const json_t *obj, const char *path, const struct hv_jfield *fields, void *dest,
                   json_t *errors);

/** Writes the JSON Pointer base + "/" + member (escaping '~' and '/') into
 *  buf. */
void hv_jpath(char *buf, size_t len, const char *base, const char *member);

/** Writes base + "/" + index into buf. */
void hv_jpath_index(char *buf, size_t len, const char *base, size_t index);

/** The name of a JSON value's type, as used in messages ("string" ...). */
const char *hv_jtype_name(const json_t *v);

/** Checks labels as targets and imports carry them: an object of at most
 *  32 members, keys of 1 to 64 of A-Z a-z 0-9 _ . -, string values of at
 *  most 128 characters (no NUL). Appends one error per problem under path
 *  (e.g. "/labels"). */
void hv_jspec_check_labels(const json_t *labels, const char *path, json_t *errors);

/** The longest target, domain or plan name, in bytes. */
#define HV_JSPEC_NAME_MAX 128

/** Whether s is a name as plans and imports give targets, domains and
 *  plans: 1 to HV_JSPEC_NAME_MAX bytes, no control characters or DEL, no
 *  '/', no blank at either end. Names appear in paths and tables, and one
 *  target must not be two ("hv01" and "hv01 "). */
bool hv_jspec_name_ok(const char *s);

#endif
