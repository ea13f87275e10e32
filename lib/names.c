/* names.c — the host-safe name rule; see names.h. */
#include "names.h"

#include "errors.h"

#include <string.h>

bool hv_name_host_ok(const char *s)
{
    if (s == NULL || s[0] == '\0' || s[0] == '.' || s[0] == '-')
        return false;
    size_t n = 0;
    for (const char *p = s; *p != '\0'; p++, n++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  (c != '\0' && strchr("._-+:@", c) != NULL);
        if (!ok || n == HV_NAME_HOST_MAX || (c == '.' && p[1] == '.'))
            return false;
    }
    return true;
}

bool hv_name_host_json_ok(const json_t *v)
{
    return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v) &&
           hv_name_host_ok(json_string_value(v));
}

int hv_name_host_check(const json_t *v, const char *path, json_t *errors)
{
    if (hv_name_host_json_ok(v))
        return 0;
    hv_errors_add(errors, path, "%s", HV_NAME_HOST_RULE);
    return 1;
}
