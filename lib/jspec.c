/* jspec.c — see jspec.h. */
#include "jspec.h"

#include "errors.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

void hv_jpath(char *buf, size_t len, const char *base, const char *member)
{
    size_t n = (size_t)snprintf(buf, len, "%s/", base);
    for (const char *p = member; *p != '\0' && n + 3 < len; p++) {
        if (*p == '~') {
            buf[n++] = '~';
            buf[n++] = '0';
        } else if (*p == '/') {
            buf[n++] = '~';
            buf[n++] = '1';
        } else {
            buf[n++] = *p;
        }
    }
    if (n < len)
        buf[n] = '\0';
    else if (len > 0)
        buf[len - 1] = '\0';
}

void hv_jpath_index(char *buf, size_t len, const char *base, size_t index)
{
    snprintf(buf, len, "%s/%zu", base, index);
}

const char *hv_jtype_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_NULL:
        return "null";
    }
    return "unknown";
}

static const char *const type_words[] = {
    [HV_J_STRING] = "a string", [HV_J_INTEGER] = "an integer", [HV_J_NUMBER] = "a number",
    [HV_J_BOOL] = "a boolean",  [HV_J_OBJECT] = "an object",   [HV_J_ARRAY] = "an array",
    [HV_J_ANY] = "any value",
};

static bool type_matches(const json_t *v, enum hv_jtype t)
{
    switch (t) {
    case HV_J_STRING:
        return json_is_string(v);
    case HV_J_INTEGER:
        return json_is_integer(v);
    case HV_J_NUMBER:
        return json_is_number(v);
    case HV_J_BOOL:
        return json_is_boolean(v);
    case HV_J_OBJECT:
        return json_is_object(v);
    case HV_J_ARRAY:
        return json_is_array(v);
    case HV_J_ANY:
        return true;
    }
    return false;
}

/* Checks one present member against its row; returns problems found. */
static int check_member(const json_t *v, const struct hv_jfield *f, const char *path,
                        json_t *errors)
{
    if (!type_matches(v, f->type)) {
        hv_errors_add(errors, path, "must be %s, not %s", type_words[f->type], hv_jtype_name(v));
        return 1;
    }
    if (f->type == HV_J_STRING) {
        const char *s = json_string_value(v);
        size_t max = f->max_len ? f->max_len : 256;
        if (json_string_length(v) > max) {
            hv_errors_add(errors, path, "must be at most %zu characters", max);
            return 1;
        }
        if (strlen(s) != json_string_length(v)) {
            hv_errors_add(errors, path, "must not contain NUL characters");
            return 1;
        }
        if (f->choices != NULL) {
            char allowed[512] = "";
            size_t n = 0;
            for (const char *const *c = f->choices; *c != NULL; c++) {
                if (strcmp(*c, s) == 0)
                    return 0;
                n += (size_t)snprintf(allowed + n, n < sizeof allowed ? sizeof allowed - n : 0,
                                      "%s%s", c == f->choices ? "" : ", ", *c);
            }
            hv_errors_add(errors, path, "must be one of: %s", allowed);
            return 1;
        }
    }
    if ((f->type == HV_J_NUMBER || f->type == HV_J_INTEGER) && f->min < f->max) {
        double d = json_number_value(v);
        if (d < f->min || d > f->max) {
            hv_errors_add(errors, path, "must be between %g and %g", f->min, f->max);
            return 1;
        }
    }
    if (f->type == HV_J_ARRAY && f->max_len && json_array_size(v) > f->max_len) {
        hv_errors_add(errors, path, "must have at most %zu entries", f->max_len);
        return 1;
    }
    return 0;
}

int hv_jspec_check(const json_t *obj, const char *path, const struct hv_jfield *fields,
                   json_t *errors)
{
    char p[512];
    if (!json_is_object(obj)) {
        hv_errors_add(errors, path[0] ? path : "", "must be an object, not %s", hv_jtype_name(obj));
        return 1;
    }
    int problems = 0;
    for (const struct hv_jfield *f = fields; f->name != NULL; f++) {
        hv_jpath(p, sizeof p, path, f->name);
        const json_t *v = json_object_get(obj, f->name);
        if (v == NULL) {
            if (f->required) {
                hv_errors_add(errors, p, "is required");
                problems++;
            }
            continue;
        }
        problems += check_member(v, f, p, errors);
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        const struct hv_jfield *f = fields;
        while (f->name != NULL && strcmp(f->name, key) != 0)
            f++;
        if (f->name == NULL) {
            hv_jpath(p, sizeof p, path, key);
            hv_errors_add(errors, p, "is not a known member");
            problems++;
        }
    }
    return problems;
}

void hv_jspec_bind(const json_t *obj, const struct hv_jfield *fields, void *dest)
{
    for (const struct hv_jfield *f = fields; f->name != NULL; f++) {
        if (f->dest == HV_JD_NONE)
            continue;
        const json_t *v = json_object_get(obj, f->name);
        void *to = (char *)dest + f->to;
        double d = v == NULL ? f->def : json_number_value(v);
        switch (f->dest) {
        case HV_JD_NONE:
            break;
        case HV_JD_STRING: {
            const char *str = v == NULL ? f->def_str : json_string_value(v);
            memcpy(to, &str, sizeof str);
            break;
        }
        case HV_JD_INT64: {
            int64_t i = v == NULL ? (int64_t)f->def : (int64_t)json_integer_value(v);
            memcpy(to, &i, sizeof i);
            break;
        }
        case HV_JD_INT: {
            int i = v == NULL ? (int)f->def : (int)json_integer_value(v);
            memcpy(to, &i, sizeof i);
            break;
        }
        case HV_JD_DOUBLE:
            memcpy(to, &d, sizeof d);
            break;
        case HV_JD_BOOL: {
            bool b = v == NULL ? f->def != 0 : json_is_true(v);
            memcpy(to, &b, sizeof b);
            break;
        }
        case HV_JD_JSON:
            memcpy(to, &v, sizeof v);
            break;
        }
    }
}

int hv_jspec_parse(const json_t *obj, const char *path, const struct hv_jfield *fields, void *dest,
                   json_t *errors)
{
    int problems = hv_jspec_check(obj, path, fields, errors);
    if (dest != NULL && json_is_object(obj))
        hv_jspec_bind(obj, fields, dest);
    return problems;
}

void hv_jspec_check_labels(const json_t *labels, const char *path, json_t *errors)
{
    const char *key;
    const json_t *v;
    char p[200];
    if (json_object_size(labels) > 32)
        hv_errors_add(errors, path, "must have at most 32 labels");
    json_object_foreach((json_t *)labels, key, v)
    {
        hv_jpath(p, sizeof p, path, key);
        bool ok = strlen(key) >= 1 && strlen(key) <= 64;
        for (const char *c = key; ok && *c; c++)
            ok = isalnum((unsigned char)*c) || strchr("_.-", *c) != NULL;
        if (!ok)
            hv_errors_add(errors, p, "label keys use 1 to 64 of A-Z a-z 0-9 _ . -");
        else if (!json_is_string(v) || json_string_length(v) > 128 ||
                 strlen(json_string_value(v)) != json_string_length(v))
            hv_errors_add(errors, p, "must be a string of at most 128 characters");
    }
}

bool hv_jspec_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > HV_JSPEC_NAME_MAX || s[0] == ' ' || s[n - 1] == ' ')
        return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == '/' || *s == 0x7f)
            return false;
    return true;
}
