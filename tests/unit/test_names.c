/* test_names.c — the host-safe name rule (lib/names.h): what passes, what
 * does not, and why each refused string is dangerous on a host. */
#include "names.h"

#include "check.h"

/* 128 and 129 characters */
#define A64  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define A128 A64 A64

static const char *const good[] = {
    "hv01", "vm0",   "Guest.2", "tmpl-p123-4", "hv-01.lab.example.org",
    "a_b",  "a+b",   "a:b",     "root@hv01",   "x",
    "9",    "a.b.c", "a-",      "a.",          "_x",
    A128,
};

static const struct {
    const char *s, *why;
} bad[] = {
    {"", "empty"},
    {"x</name><foo/>", "markup in libvirt's XML"},
    {"a<b", "markup"},
    {"a&b", "an entity"},
    {"a\"b", "a quote"},
    {"a'b", "a quote"},
    {"a init=/bin/sh", "a kernel parameter"},
    {"a b", "a blank"},
    {"a\tb", "a tab"},
    {"a\nb", "a new line"},
    {"../x", "up a folder"},
    {"a/b", "a path"},
    {"a..b", "a way up inside"},
    {"..", "the parent folder"},
    {".x", "a hidden file"},
    {"-rf", "an option"},
    {"a;b", "a shell separator"},
    {"a$b", "a variable"},
    {"a`b`", "a command"},
    {"a%00", "an escape"},
    {"a{plan}", "braces"},
    {"\xef\xbd\x88\xef\xbd\x96"
     "01",
     "full-width letters"},
    {"vm\xd0\xb0", "a Cyrillic a"},
    {"a\x7f", "DEL"},
    {A128 "a", "129 characters"},
};

int main(void)
{
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK_MSG(hv_name_host_ok(good[i]), "good %zu: %s", i, good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(!hv_name_host_ok(bad[i].s), "bad %zu (%s) passed", i, bad[i].why);
    CHECK(!hv_name_host_ok(NULL));

    /* JSON strings: a NUL inside is refused, as is any other type */
    json_t *nul = json_stringn("a\0b", 3), *num = json_integer(1), *ok = json_string("hv01");
    CHECK(!hv_name_host_json_ok(nul));
    CHECK(!hv_name_host_json_ok(num));
    CHECK(!hv_name_host_json_ok(NULL));
    CHECK(hv_name_host_json_ok(ok));

    /* the check appends the rule at the path */
    json_t *errors = json_array();
    CHECK(hv_name_host_check(ok, "/targets/host", errors) == 0);
    CHECK(hv_name_host_check(nul, "/targets/host", errors) == 1);
    CHECK(json_array_size(errors) == 1);
    const json_t *e = json_array_get(errors, 0);
    CHECK_STR(json_string_value(json_object_get(e, "path")), "/targets/host");
    CHECK_STR(json_string_value(json_object_get(e, "message")), HV_NAME_HOST_RULE);
    json_decref(errors);
    json_decref(nul);
    json_decref(num);
    json_decref(ok);
    return check_summary("test_names");
}
