/* test_act_site.c — site factors: the worker configuration's
 * "factors" checked strictly (every problem at its JSON Pointer), what the
 * facts publish, and the actuators applying, reading back, journalling and
 * restoring a knob backed by a file of a temporary tree, through small
 * /bin/sh programs the test writes as the site's own (the worker runs them
 * by argv, never through a shell): "{level}" and "{value}" replaced inside
 * an argument, a level with shell characters written as it is, a failing
 * program naming the factor and the level, a restore from the journal
 * alone (no configuration, as after a crash), and an undeclared factor or
 * level refused before anything runs. A drain hook runs with {host} and
 * {plan} in its arguments, and never runs for a host or hook name that is
 * not host-safe (names.h). */
#include "tests/unit/check.h"
#include "worker/config.h"
#include "worker/virt/actuator.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[256];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Writes text to top/name with mode. */
static void put(const char *name, const char *text, mode_t mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", top, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(99);
    }
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

/* The text of top/name, its last newline dropped ("<missing>"). */
static const char *get(const char *name)
{
    static char buf[512];
    char path[512];
    snprintf(path, sizeof path, "%s/%s", top, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return "<missing>";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n > 0 && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    return buf;
}

/* A configuration document with the test's programs: each '@' stands for
 * the tree. */
static json_t *conf_doc(const char *tmpl)
{
    char text[8192];
    size_t n = 0;
    for (const char *p = tmpl; *p != '\0' && n + 300 < sizeof text; p++)
        n += (size_t)(*p == '@' ? snprintf(text + n, sizeof text - n, "%s", top)
                                : snprintf(text + n, sizeof text - n, "%c", *p));
    return check_json(text);
}

static const char *const good =
    "{\"factors\": {"
    " \"knob\": {\"levels\": [\"a\", \"b\", \"x;touch @/pwned\"], \"class\": \"host\","
    "  \"apply\": [\"@/set.sh\", \"--to={level}\", \"@/knob\"],"
    "  \"read\": [\"@/get.sh\", \"@/knob\"],"
    "  \"revert\": [\"@/set.sh\", \"--to={value}\", \"@/knob\"]},"
    " \"broken\": {\"levels\": [\"on\", \"off\"], \"class\": \"host\", \"timeout\": 5,"
    "  \"apply\": [\"@/fail.sh\", \"{level}\"],"
    "  \"read\": [\"@/get.sh\", \"@/other\"],"
    "  \"revert\": [\"@/set.sh\", \"--to={value}\", \"@/other\"]}}}";

static struct hv_conf *load_good(void)
{
    json_t *doc = conf_doc(good), *errors = json_array();
    struct hv_conf *c = hv_conf_from_json(doc, errors);
    if (c == NULL) {
        char *e = json_dumps(errors, 0);
        check_note("errors: %s", e);
        free(e);
    }
    CHECK(c != NULL);
    json_decref(errors);
    json_decref(doc);
    return c;
}

static void test_config(void)
{
    struct hv_conf *c = load_good();
    if (c == NULL)
        return;
    CHECK(c->n_factors == 2);
    CHECK_STR(c->factors[0].name, "broken"); /* sorted */
    CHECK(c->factors[0].timeout == 5);
    CHECK(c->factors[1].timeout == HV_CONF_FACTOR_TIMEOUT);
    CHECK(hv_conf_find_factor(c, "knob") == &c->factors[1]);
    CHECK(hv_conf_find_factor(c, "site.knob") == NULL);
    json_t *facts = hv_conf_factors_json(c);
    char *s = json_dumps(json_object_get(facts, "broken"), JSON_SORT_KEYS);
    CHECK_STR(s, "{\"class\": \"host\", \"levels\": [\"on\", \"off\"]}");
    free(s);
    CHECK(json_object_get(json_object_get(facts, "knob"), "apply") == NULL); /* never the argv */
    json_decref(facts);
    hv_conf_free(c);
    facts = hv_conf_factors_json(NULL);
    CHECK(json_is_object(facts) && json_object_size(facts) == 0);
    json_decref(facts);

    /* Every problem, at its pointer. */
    json_t *doc = conf_doc(
        "{\"factors\": {"
        " \"Bad-Name\": {},"
        " \"k1\": {\"levels\": [\"a\", \"a\", \" b\", 3], \"class\": \"guest\", \"apply\": [],"
        "  \"read\": [\"get.sh\"], \"revert\": [\"@/set.sh\"]},"
        " \"k2\": {\"levels\": [\"a\"], \"class\": \"host\", \"apply\": [\"@/set.sh\", \"a\"],"
        "  \"read\": [\"@/get.sh\"], \"revert\": [\"@/set.sh\", \"b\"], \"timeout\": 0},"
        " \"k3\": {\"levels\": [\"a\"], \"class\": \"host\", \"apply\": [\"@/set.sh\", "
        "\"{level}\"], \"read\": [\"@/nothing\"], \"revert\": [\"@/set.sh\", \"{value}\"],"
        "  \"extra\": 1},"
        " \"k4\": {\"levels\": [\"a\"], \"class\": \"host\", \"apply\": [\"@/set.sh\", "
        "\"{level}\"], \"read\": [\"@/get.sh\"], \"revert\": [\"@/set.sh\", \"x\"]}}}");
    json_t *errors = json_array();
    CHECK(hv_conf_from_json(doc, errors) == NULL);
    char *all = json_dumps(errors, JSON_INDENT(1));
    check_note("errors: %s", all);
    const char *want[] = {
        "/factors/Bad-Name",   "the factor name must start with a letter a-z",
        "/factors/k1/class",   "must be one of",
        "/factors/k2/timeout", "",
        "/factors/k3/extra",   "",
        "/factors/k4/revert",  "must hold {value} in an argument",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i += 2) {
        bool found = false;
        size_t k;
        json_t *e;
        json_array_foreach(errors, k, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "path")), want[i]) == 0 &&
                strstr(json_string_value(json_object_get(e, "message")), want[i + 1]) != NULL)
                found = true;
        }
        CHECK_MSG(found, "no error at %s saying \"%s\"", want[i], want[i + 1]);
    }
    json_decref(errors);
    json_decref(doc);

    /* k1 again with a valid class: its levels and argvs. */
    doc = conf_doc("{\"factors\": {"
                   " \"k1\": {\"levels\": [\"a\", \"a\", \" b\", 3], \"class\": \"host\","
                   "  \"apply\": [], \"read\": [\"get.sh\"], \"revert\": [\"@/set.sh\"]},"
                   " \"k2\": {\"levels\": [\"a\"], \"class\": \"host\","
                   "  \"apply\": [\"@/set.sh\", \"a\"], \"read\": [\"@/nothing\"],"
                   "  \"revert\": [\"@/set.sh\", \"{value}\"]}}}");
    errors = json_array();
    CHECK(hv_conf_from_json(doc, errors) == NULL);
    free(all);
    all = json_dumps(errors, JSON_INDENT(1));
    check_note("errors: %s", all);
    const char *want2[] = {
        "/factors/k1/levels/1", "repeats an earlier level",
        "/factors/k1/levels/2", "must not start or end with a blank",
        "/factors/k1/levels/3", "must be a string",
        "/factors/k1/apply",    "must hold at least the program",
        "/factors/k1/read/0",   "must be an absolute path (the worker never looks a site factor's",
        "/factors/k2/read/0",   "No such file or directory",
    };
    for (size_t i = 0; i < sizeof want2 / sizeof want2[0]; i += 2) {
        bool found = false;
        size_t k;
        json_t *e;
        json_array_foreach(errors, k, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "path")), want2[i]) == 0 &&
                strstr(json_string_value(json_object_get(e, "message")), want2[i + 1]) != NULL)
                found = true;
        }
        CHECK_MSG(found, "no error at %s saying \"%s\"", want2[i], want2[i + 1]);
    }
    free(all);
    json_decref(errors);
    json_decref(doc);
}

static struct hv_journal *journal(long long plan)
{
    char dir[512], err[512];
    snprintf(dir, sizeof dir, "%s/journal", top);
    struct hv_journal *j = hv_journal_open(dir, plan, err, sizeof err);
    if (j == NULL) {
        fprintf(stderr, "journal: %s\n", err);
        exit(99);
    }
    return j;
}

static const char *member(const json_t *settings, const char *factor, const char *name)
{
    return json_string_value(json_object_get(json_object_get(settings, factor), name));
}

static void test_apply_restore(void)
{
    struct hv_conf *c = load_good();
    if (c == NULL)
        return;
    hv_actuators_use_conf(c);
    put("knob", "a\n", 0644);
    put("other", "on\n", 0644);
    char err[4096];
    struct hv_journal *j = journal(7);
    struct hv_act_ctx ctx = {.root = top, .plan_id = 7, .journal = j};
    json_t *levels = check_json("{\"site.knob\": \"b\"}"), *settings = NULL;
    CHECK_MSG(hv_actuators_apply(levels, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    CHECK_STR(get("knob"), "b");
    CHECK_STR(member(settings, "site.knob", "level"), "b");
    CHECK_STR(member(settings, "site.knob", "read_back"), "b");
    CHECK(strstr(member(settings, "site.knob", "source"), "get.sh") != NULL);
    CHECK(hv_journal_count(j) == 1);
    const json_t *e = hv_journal_at(j, 0);
    CHECK_STR(json_string_value(json_object_get(e, "kind")), "site_factor");
    CHECK_STR(json_string_value(json_object_get(e, "object")), "site.knob");
    CHECK_STR(json_string_value(json_object_get(e, "original")), "a");
    CHECK_STR(json_string_value(json_array_get(json_object_get(e, "revert"), 1)), "--to=a");
    CHECK(json_array_size(ctx.changes) == 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(ctx.changes, 0), "from")), "a");
    json_decref(settings);

    /* Read back with nothing changed; then moved under the job. */
    CHECK_MSG(hv_actuators_read_back(levels, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    json_decref(settings);
    put("knob", "a\n", 0644);
    CHECK(hv_actuators_read_back(levels, &ctx, &settings, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "site.knob=b: reads back a") != NULL, "%s", err);
    json_decref(settings);

    /* A second block: the plan's first original stays in the journal. A
     * level with shell characters is written as it is. */
    json_decref(levels);
    char lv[600];
    snprintf(lv, sizeof lv, "{\"site.knob\": \"x;touch %s/pwned\"}", top);
    levels = check_json(lv);
    CHECK_MSG(hv_actuators_apply(levels, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    char want[600];
    snprintf(want, sizeof want, "x;touch %s/pwned", top);
    CHECK_STR(get("knob"), want);
    CHECK_STR(get("pwned"), "<missing>");
    CHECK(hv_journal_count(j) == 1);
    json_decref(settings);
    json_decref(levels);

    /* A failing apply program: the factor, the level and its message. */
    levels = check_json("{\"site.broken\": \"off\"}");
    CHECK(hv_actuators_apply(levels, &ctx, &settings, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "site.broken=off: site.broken's apply program") != NULL &&
                  strstr(err, "exited with status 3") != NULL && strstr(err, "no pool") != NULL,
              "%s", err);
    CHECK_STR(member(settings, "site.broken", "read_back"), "on");
    json_decref(settings);
    json_decref(levels);

    /* Undeclared factors and levels: refused before anything runs. */
    levels = check_json("{\"site.nope\": \"a\", \"site.knob\": \"c\"}");
    CHECK(hv_actuators_apply(levels, &ctx, &settings, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "site.nope=a: not declared in this worker's configuration") != NULL, "%s",
              err);
    CHECK_MSG(strstr(err, "site.knob=c: \"c\" is not a level this worker declares; one of: a, b") !=
                  NULL,
              "%s", err);
    json_decref(settings);
    json_decref(levels);
    json_decref(ctx.changes);
    hv_journal_close(j);

    /* A crash: a fresh worker without its configuration restores from the
     * journal alone. */
    hv_actuators_use_conf(NULL);
    hv_conf_free(c);
    j = journal(7);
    CHECK(hv_journal_count(j) == 2); /* knob, and broken's (its apply may have done something) */
    struct hv_act_ctx again = {.root = top, .plan_id = 7, .journal = j};
    CHECK_MSG(hv_actuators_restore(&again, err, sizeof err) == 0, "%s", err);
    CHECK_STR(get("knob"), "a");
    CHECK_STR(get("other"), "on");
    CHECK(hv_journal_count(j) == 0);
    bool noted = false;
    for (size_t i = 0; i < json_array_size(again.changes); i++) {
        const json_t *ch = json_array_get(again.changes, i);
        if (strcmp(json_string_value(json_object_get(ch, "factor")), "site.knob") == 0)
            noted = strcmp(json_string_value(json_object_get(ch, "to")), "a") == 0 &&
                    strcmp(json_string_value(json_object_get(ch, "from")), want) == 0;
    }
    CHECK(noted);
    json_decref(again.changes);
    hv_journal_close(j);
}

/* A hook that records its arguments: it runs for a host-safe host and
 * hook name, and for no other. */
static void test_hooks(void)
{
    json_t *doc = conf_doc("{\"hooks\": {\"drain\": [\"@/set.sh\", \"--to={host}:{plan}\", "
                           "\"@/drained\"]}}");
    json_t *errors = json_array();
    struct hv_conf *c = hv_conf_from_json(doc, errors);
    CHECK(c != NULL);
    hv_actuators_use_conf(c);
    char why[512];
    json_t *answer = NULL;
    CHECK_MSG(hv_site_hook_run("drain", 7, "hv-01.lab", "before_host", NULL, NULL, NULL, &answer,
                               why, sizeof why) == 0,
              "%s", why);
    CHECK_STR(get("drained"), "hv-01.lab:7");
    json_decref(answer);
    unlink(strcat(strcpy(why, top), "/drained"));
    static const char *const hostile[] = {
        "a init=/bin/sh", "x</name>", "a&b", "../x", "a/b", "a\nb", "-rf", "\xd0\xb0", "",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        answer = NULL;
        CHECK_MSG(hv_site_hook_run("drain", 7, hostile[i], "before_host", NULL, NULL, NULL, &answer,
                                   why, sizeof why) == -1 &&
                      strstr(why, "host-safe name") != NULL && answer == NULL,
                  "host %zu: %s", i, why);
        CHECK_MSG(hv_site_hook_run(hostile[i], 7, "hv01", "before_host", NULL, NULL, NULL, &answer,
                                   why, sizeof why) == -1 &&
                      strstr(why, "host-safe name") != NULL && answer == NULL,
                  "hook %zu: %s", i, why);
    }
    CHECK_STR(get("drained"), "<missing>");
    hv_actuators_use_conf(NULL);
    hv_conf_free(c);
    json_decref(errors);
    json_decref(doc);
}

/* A hook gets the call in its environment, not the worker's own HVBENCH_*
 * variables; exit status 75 is "not yet", its last line the words. */
static void test_hook_not_yet(void)
{
    json_t *doc = conf_doc(
        "{\"hooks\": {\"gate\": [\"/bin/sh\", \"-c\", \"echo \\\"$HVBENCH_HOOK $HVBENCH_PLAN "
        "$HVBENCH_TARGET $HVBENCH_LABEL_SLURM_NODE $HVBENCH_LABELS ${HVBENCH_SECRET:-unset}\\\"; "
        "echo checking; echo '  draining: job 9 on n7  '; echo; exit 75\"]}}");
    json_t *errors = json_array();
    struct hv_conf *c = hv_conf_from_json(doc, errors);
    CHECK(c != NULL);
    hv_actuators_use_conf(c);
    setenv("HVBENCH_SECRET", "worker-only", 1);
    json_t *labels = json_pack("{s:s, s:s, s:i}", "slurm.node", "n7", "rack", "r1", "n", 3);
    char why[512];
    json_t *answer = NULL;
    CHECK_MSG(hv_site_hook_run("gate", 12, "hv01", "before_host", labels, NULL, NULL, &answer, why,
                               sizeof why) == 1,
              "%s", why);
    CHECK_STR(why, "draining: job 9 on n7");
    CHECK(json_integer_value(json_object_get(answer, "exit_status")) == HV_HOOK_NOT_YET);
    const char *out = json_string_value(json_object_get(answer, "output"));
    CHECK_MSG(out != NULL &&
                  strncmp(out, "before_host 12 hv01 n7 rack=r1,slurm.node=n7 unset\n",
                          strlen("before_host 12 hv01 n7 rack=r1,slurm.node=n7 unset\n")) == 0,
              "output: %s", out != NULL ? out : "(null)");
    unsetenv("HVBENCH_SECRET");
    json_decref(answer);
    json_decref(labels);
    hv_actuators_use_conf(NULL);
    hv_conf_free(c);
    json_decref(errors);
    json_decref(doc);
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/hv-site-XXXXXX");
    if (mkdtemp(top) == NULL)
        return 99;
    put("set.sh", "#!/bin/sh\nprintf '%s\\n' \"${1#--to=}\" >\"$2\"\n", 0755);
    put("get.sh", "#!/bin/sh\ncat \"$1\"\n", 0755);
    put("fail.sh", "#!/bin/sh\necho 'cannot set it: no pool' >&2\nexit 3\n", 0755);
    test_config();
    test_apply_restore();
    test_hooks();
    test_hook_not_yet();
    nftw(top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return check_summary("test_act_site");
}
