/* selector.c — see selector.h. */
#include "selector.h"

#include "errors.h"
#include "jspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEY   64
#define MAX_VALUE 128

int hv_label_key_ok(const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > MAX_KEY)
        return 0;
    for (const char *c = key; *c != '\0'; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("_.-/", *c) != NULL))
            return 0;
    return 1;
}

int hv_label_value_ok(const char *value)
{
    size_t n = strlen(value);
    if (n == 0 || n > MAX_VALUE)
        return 0;
    for (const unsigned char *c = (const unsigned char *)value; *c != '\0'; c++)
        if (*c < 0x21 || *c == 0x7f || *c == ',' || *c == '=')
            return 0;
    return 1;
}

/* A key as a selector may name it: a worker's own --label keys are taken
 * as given, so anything but space, control characters, ',' and '='. */
static int selector_key_ok(const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > MAX_KEY)
        return 0;
    for (const unsigned char *c = (const unsigned char *)key; *c != '\0'; c++)
        if (*c <= 0x20 || *c == 0x7f || *c == ',' || *c == '=')
            return 0;
    return 1;
}

json_t *hv_selector_parse(const char *text, char *err, size_t len)
{
    if (text == NULL || text[0] == '\0') {
        snprintf(err, len, "is empty; give key=value[,key=value...]");
        return NULL;
    }
    json_t *sel = json_object();
    char *copy = strdup(text);
    if (sel == NULL || copy == NULL) {
        snprintf(err, len, "out of memory");
        json_decref(sel);
        free(copy);
        return NULL;
    }
    int pairs = 0;
    char *rest = copy;
    for (;;) {
        char *comma = strchr(rest, ',');
        if (comma != NULL)
            *comma = '\0';
        char *eq = strchr(rest, '=');
        if (eq == NULL) {
            snprintf(err, len, "'%s' is not key=value", rest);
            goto bad;
        }
        *eq = '\0';
        const char *key = rest, *value = eq + 1;
        if (!selector_key_ok(key)) {
            snprintf(err, len, "key '%s': 1 to %d bytes, no space or control character", key,
                     MAX_KEY);
            goto bad;
        }
        if (value[0] == '\0' || strlen(value) > MAX_VALUE) {
            snprintf(err, len, "value of %s: 1 to %d characters", key, MAX_VALUE);
            goto bad;
        }
        if (json_object_get(sel, key) != NULL) {
            snprintf(err, len, "key %s is given twice", key);
            goto bad;
        }
        if (++pairs > HV_SELECTOR_MAX_PAIRS) {
            snprintf(err, len, "more than %d pairs", HV_SELECTOR_MAX_PAIRS);
            goto bad;
        }
        json_object_set_new(sel, key, json_string(value));
        if (comma == NULL)
            break;
        rest = comma + 1;
    }
    free(copy);
    return sel;
bad:
    free(copy);
    json_decref(sel);
    return NULL;
}

void hv_labels_check(const json_t *labels, const char *path, json_t *errors)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)labels, key, v)
    {
        char p[160];
        hv_jpath(p, sizeof p, path, key);
        if (!hv_label_key_ok(key))
            hv_errors_add(errors, p, "a key is 1 to 64 of A-Z a-z 0-9 _ . - /");
        else if (!json_is_string(v) || !hv_label_value_ok(json_string_value(v)))
            hv_errors_add(errors, p,
                          "must be a string of 1 to 128 printable characters, no space, ',' "
                          "or '='");
    }
}
