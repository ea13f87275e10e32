/* test_selector.c — lib/selector.c: label selectors parse into the object
 * the database matches with @>, and every malformed one is refused with
 * what is wrong. */
#include <string.h>

#include "selector.h"
#include "tests/unit/check.h"

/* Parses text; returns it dumped with sorted keys ("" when refused, err
 * then set). */
static const char *parsed(const char *text, char *err, size_t len)
{
    static char out[512];
    err[0] = '\0';
    json_t *sel = hv_selector_parse(text, err, len);
    if (sel == NULL)
        return "";
    char *s = json_dumps(sel, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf(out, sizeof out, "%s", s != NULL ? s : "?");
    free(s);
    json_decref(sel);
    return out;
}

int main(void)
{
    char err[200];
    static const struct {
        const char *text, *want;
    } good[] = {
        {"pool=batch", "{\"pool\":\"batch\"}"},
        {"pool=batch,cpu=epyc", "{\"cpu\":\"epyc\",\"pool\":\"batch\"}"},
        {"topology.kubernetes.io/zone=eu-1a", "{\"topology.kubernetes.io/zone\":\"eu-1a\"}"},
        {"a_b-c.d=x:y/z@1", "{\"a_b-c.d\":\"x:y/z@1\"}"},
        {"note=a b", "{\"note\":\"a b\"}"},
        {"eq=a=b", "{\"eq\":\"a=b\"}"},
        {"r\xc3\xb4le=x", "{\"r\xc3\xb4le\":\"x\"}"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *got = parsed(good[i].text, err, sizeof err);
        CHECK_MSG(strcmp(got, good[i].want) == 0, "%s: got '%s' (%s)", good[i].text, got, err);
    }
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"", "is empty"},
        {"pool", "'pool' is not key=value"},
        {"=batch", "key ''"},
        {"pool=", "value of pool"},
        {"pool=a,", "'' is not key=value"},
        {",pool=a", "'' is not key=value"},
        {"pool=a, cpu=b", "key ' cpu'"},
        {"po ol=a", "key 'po ol'"},
        {"pool=a,pool=b", "key pool is given twice"},
        {"a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1,j=1,k=1,l=1,m=1,n=1,o=1,p=1,q=1", "more than 16"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1", "key 'aaaa"},
        {"a\tb=1", "key 'a"},
        {"k="
         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
         "xx"
         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
         "value of k"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *got = parsed(bad[i].text, err, sizeof err);
        CHECK_MSG(got[0] == '\0', "accepted '%s' as %s", bad[i].text, got);
        CHECK_MSG(strstr(err, bad[i].why) != NULL, "'%s': said '%s', not '%s'", bad[i].text, err,
                  bad[i].why);
    }
    CHECK(hv_selector_parse(NULL, err, sizeof err) == NULL);
    CHECK(hv_label_key_ok("pool") && !hv_label_key_ok("") && !hv_label_key_ok("a,b"));
    CHECK(hv_label_value_ok("r12") && !hv_label_value_ok("") && !hv_label_value_ok("a b"));
    /* Labels as an object: each bad pair under its path, good ones pass. */
    json_t *labels =
        json_pack("{s:s,s:s,s:i,s:s}", "pool", "batch", "a b", "x", "rack", 3, "zone", "a,b");
    json_t *errors = json_array();
    hv_labels_check(labels, "/selector", errors);
    CHECK(json_array_size(errors) == 3);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(errors, 0), "path")),
                 "/selector/a b") == 0);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(errors, 2), "path")),
                 "/selector/zone") == 0);
    json_decref(labels);
    json_decref(errors);
    return check_summary("test_selector");
}
