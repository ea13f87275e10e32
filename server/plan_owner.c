/* plan_owner.c — see plan_owner.h. */
#include "plan_owner.h"

#include "db_plans.h"

#include <stdio.h>

bool hv_plan_owner_may_act(enum hv_role role, int64_t token_id, int64_t owner_id)
{
    if (role == HV_ROLE_ADMIN)
        return true;
    return role == HV_ROLE_SUBMIT && owner_id > 0 && owner_id == token_id;
}

void hv_plan_owner_refusal(char *buf, size_t len, const char *action, int64_t plan_id,
                           const char *owner)
{
    if (owner[0] == '\0')
        snprintf(buf, len, "plan %lld has no submitter: an admin's; only an admin token may %s it",
                 (long long)plan_id, action);
    else
        snprintf(buf, len,
                 "plan %lld belongs to token \"%s\", which submitted it; only that token or an "
                 "admin token may %s it",
                 (long long)plan_id, owner, action);
}

/* Longer names are cut in the detail only. */
#define OWNER_NAME_MAX 256

bool hv_plan_owner_check(struct hv_request *req, int64_t plan_id, const char *action)
{
    /* Whoever owns it, an admin may: the database need not be asked. */
    if (req->role == HV_ROLE_ADMIN)
        return true;
    int64_t owner_id = 0;
    char owner[OWNER_NAME_MAX];
    enum hv_db_status s = hv_db_plan_owner(plan_id, &owner_id, owner, sizeof owner);
    if (s == HV_DB_NONE) {
        hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
        return false;
    }
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return false;
    }
    if (hv_plan_owner_may_act(req->role, req->token_id, owner_id))
        return true;
    char detail[OWNER_NAME_MAX + 160];
    hv_plan_owner_refusal(detail, sizeof detail, action, plan_id, owner);
    hv_reply_problem(req, HV_E_NOT_OWNER, detail, NULL);
    return false;
}
