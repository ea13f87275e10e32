/* test_jspec.c — lib/jspec.c: a table checks an object (every problem at
 * its JSON Pointer path, the same messages as ever) and binds its members
 * to a struct, with the row's default for an absent member. */
#include <stdint.h>
#include <string.h>

#include "jspec.h"
#include "tests/unit/check.h"

struct body {
    const char *name;
    const char *mode;
    int64_t count;
    int attempt;
    double wait;
    bool dry;
    const json_t *labels;
    const json_t *items;
    const json_t *any;
};

#define TO(field) HV_JTO(struct body, field)

static const char *const modes[] = {"fast", "slow", NULL};

static const struct hv_jfield fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 8, TO(name)},
    {.name = "mode", .type = HV_J_STRING, .choices = modes, TO(mode), .def_str = "slow"},
    {.name = "count", .type = HV_J_INTEGER, .min = 1, .max = 1e12, TO(count), .def = 7},
    {.name = "attempt", .type = HV_J_INTEGER, .min = 1, .max = 1e9, TO(attempt), .def = 1},
    {.name = "wait", .type = HV_J_NUMBER, .min = 0, .max = 60, TO(wait), .def = 2.5},
    {.name = "dry", .type = HV_J_BOOL, TO(dry), .def = 1},
    {.name = "labels", .type = HV_J_OBJECT, TO(labels)},
    {.name = "items", .type = HV_J_ARRAY, .max_len = 2, TO(items)},
    {.name = "any", .type = HV_J_ANY, TO(any)},
    {.name = "unbound", .type = HV_J_STRING},
    {0},
};

/* The errors of checking text against fields, as compact JSON. */
static char *problems(const char *text, int *count)
{
    json_t *doc = check_json(text);
    json_t *errors = json_array();
    struct body b;
    memset(&b, 0x5a, sizeof b);
    *count = hv_jspec_parse(doc, "", fields, &b, errors);
    char *out = json_dumps(errors, JSON_COMPACT);
    json_decref(errors);
    json_decref(doc);
    return out;
}

static void bound_values(void)
{
    json_t *doc = check_json("{\"name\":\"hv01\",\"mode\":\"fast\",\"count\":123456789012,"
                             "\"attempt\":3,\"wait\":1.5,\"dry\":false,\"labels\":{\"a\":\"b\"},"
                             "\"items\":[1],\"any\":null,\"unbound\":\"x\"}");
    json_t *errors = json_array();
    struct body b;
    memset(&b, 0x5a, sizeof b);
    CHECK(hv_jspec_parse(doc, "", fields, &b, errors) == 0);
    CHECK(json_array_size(errors) == 0);
    CHECK_STR(b.name, "hv01");
    CHECK_STR(b.mode, "fast");
    CHECK(b.count == 123456789012LL);
    CHECK(b.attempt == 3);
    CHECK(b.wait == 1.5);
    CHECK(!b.dry);
    CHECK(b.labels == json_object_get(doc, "labels"));
    CHECK(b.items == json_object_get(doc, "items"));
    CHECK(json_is_null(b.any));
    /* An integer where a number goes. */
    json_object_set_new(doc, "wait", json_integer(4));
    hv_jspec_bind(doc, fields, &b);
    CHECK(b.wait == 4.0);
    json_decref(errors);
    json_decref(doc);
}

/* text parsed and bound into *b (filled with garbage first, so every
 * member is shown to be written); the caller frees the document. */
static json_t *bound(const char *text, struct body *b)
{
    json_t *doc = check_json(text);
    memset(b, 0x5a, sizeof *b);
    hv_jspec_bind(doc, fields, b);
    return doc;
}

static void defaults(void)
{
    struct body b;
    json_t *doc = bound("{\"name\":\"x\"}", &b);
    CHECK_STR(b.name, "x");
    CHECK_STR(b.mode, "slow");
    CHECK(b.count == 7);
    CHECK(b.attempt == 1);
    CHECK(b.wait == 2.5);
    CHECK(b.dry);
    CHECK(b.labels == NULL);
    CHECK(b.items == NULL);
    CHECK(b.any == NULL);
    json_decref(doc);
}

static void errors_unchanged(void)
{
    static const struct {
        const char *body;
        int count;
        const char *errors;
    } cases[] = {
        {"{}", 1, "[{\"path\":\"/name\",\"message\":\"is required\"}]"},
        {"{\"name\":1}", 1, "[{\"path\":\"/name\",\"message\":\"must be a string, not integer\"}]"},
        {"{\"name\":\"x\",\"count\":1.5}", 1,
         "[{\"path\":\"/count\",\"message\":\"must be an integer, not number\"}]"},
        {"{\"name\":\"x\",\"wait\":\"1\"}", 1,
         "[{\"path\":\"/wait\",\"message\":\"must be a number, not string\"}]"},
        {"{\"name\":\"x\",\"dry\":0}", 1,
         "[{\"path\":\"/dry\",\"message\":\"must be a boolean, not integer\"}]"},
        {"{\"name\":\"x\",\"extra\":1}", 1,
         "[{\"path\":\"/extra\",\"message\":\"is not a known member\"}]"},
        {"{\"name\":\"x\",\"mode\":\"quick\"}", 1,
         "[{\"path\":\"/mode\",\"message\":\"must be one of: fast, slow\"}]"},
        {"{\"name\":\"x\",\"wait\":61}", 1,
         "[{\"path\":\"/wait\",\"message\":\"must be between 0 and 60\"}]"},
        {"{\"name\":\"123456789\"}", 1,
         "[{\"path\":\"/name\",\"message\":\"must be at most 8 characters\"}]"},
        {"{\"name\":\"x\",\"items\":[1,2,3]}", 1,
         "[{\"path\":\"/items\",\"message\":\"must have at most 2 entries\"}]"},
        {"{\"name\":\"x\",\"a/b\":1,\"labels\":[]}", 2,
         "[{\"path\":\"/labels\",\"message\":\"must be an object, not array\"},"
         "{\"path\":\"/a~1b\",\"message\":\"is not a known member\"}]"},
        {"[]", 1, "[{\"path\":\"\",\"message\":\"must be an object, not array\"}]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int count = -1;
        char *got = problems(cases[i].body, &count);
        CHECK_MSG(count == cases[i].count, "%s: %d problems", cases[i].body, count);
        CHECK_MSG(strcmp(got, cases[i].errors) == 0, "%s: %s", cases[i].body, got);
        free(got);
    }
}

/* Members of the wrong type bind as zero, so checks after a failed check
 * read NULL rather than another type's value. */
static void wrong_types_bind_zero(void)
{
    struct body b;
    json_t *doc = bound("{\"name\":1,\"count\":\"x\",\"dry\":\"yes\",\"wait\":null}", &b);
    CHECK(b.name == NULL);
    CHECK(b.count == 0);
    CHECK(!b.dry);
    CHECK(b.wait == 0);
    json_decref(doc);
}

int main(void)
{
    bound_values();
    defaults();
    errors_unchanged();
    wrong_types_bind_zero();
    return check_summary("jspec");
}
