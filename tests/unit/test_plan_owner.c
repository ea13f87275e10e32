/* test_plan_owner.c — who may cancel or retry a plan (server/plan_owner.c),
 * without a database: the rule for every role and owner, the refusal's
 * words, and the check's answers when it needs no database (an admin) or
 * cannot reach one. The owner as the database reads it is tested by
 * tests/integration/test_ownership.sh. */
#include "check.h"
#include "server/db.h"
#include "server/plan_owner.h"
#include "server/request.h"

static void test_rule(void)
{
    /* Caller's role and token, the plan's owner (0: none), the verdict. */
    static const struct {
        enum hv_role role;
        int64_t token, owner;
        bool may;
    } cases[] = {
        {HV_ROLE_SUBMIT, 7, 7, true},  /* its own */
        {HV_ROLE_SUBMIT, 7, 8, false}, /* another token's */
        {HV_ROLE_SUBMIT, 7, 0, false}, /* no submitter: an admin's */
        {HV_ROLE_SUBMIT, 0, 0, false}, /* no token never matches no owner */
        {HV_ROLE_ADMIN, 1, 8, true},   {HV_ROLE_ADMIN, 1, 0, true},
        {HV_ROLE_READ, 7, 7, false}, /* a role that may not act at all */
        {HV_ROLE_WORKER, 7, 7, false}, {HV_ROLE_NONE, 0, 0, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(hv_plan_owner_may_act(cases[i].role, cases[i].token, cases[i].owner) ==
                      cases[i].may,
                  "case %zu", i);
}

static void test_refusal(void)
{
    char buf[256];
    hv_plan_owner_refusal(buf, sizeof buf, "cancel", 12, "ci-bot");
    CHECK_MSG(strcmp(buf, "plan 12 belongs to token \"ci-bot\", which submitted it; only that "
                          "token or an admin token may cancel it") == 0,
              "%s", buf);
    hv_plan_owner_refusal(buf, sizeof buf, "retry", 3, "");
    CHECK_MSG(
        strcmp(buf, "plan 3 has no submitter: an admin's; only an admin token may retry it") == 0,
        "%s", buf);
    /* A small buffer cuts the text, never overruns. */
    char small[16];
    hv_plan_owner_refusal(small, sizeof small, "retry", 3, "");
    CHECK(strlen(small) == sizeof small - 1);
}

static void test_check(void)
{
    /* A database nobody can reach. */
    hv_db_configure("host=/nonexistent-hvbench-socket-dir dbname=none connect_timeout=1");
    struct hv_request req = {.method = "POST", .url = "/api/v1/plans/5/cancel"};
    req.role = HV_ROLE_ADMIN;
    req.token_id = 1;
    CHECK(hv_plan_owner_check(&req, 5, "cancel"));
    CHECK(req.status == 0 && req.reply == NULL); /* nothing answered, nothing asked */
    req.role = HV_ROLE_SUBMIT;
    CHECK(!hv_plan_owner_check(&req, 5, "cancel"));
    CHECK(req.status == 503);
    CHECK(strcmp(json_string_value(json_object_get(req.reply, "code")), "db_unavailable") == 0);
    json_decref(req.reply);
}

int main(void)
{
    test_rule();
    test_refusal();
    test_check();
    return check_summary("test_plan_owner");
}
