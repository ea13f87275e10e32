/* plan_owner.h — who may cancel or retry a plan.
 *
 * A plan is its submitter's: the token that submitted it, a fleet child's
 * being its parent's (they are cancelled and retried as one). A plan with
 * no submitter — imported from another server, or whose token was revoked
 * — is an admin's. An admin token may act on every plan, a submit token on
 * its own only. Who the owner is, the database layer says
 * (hv_db_plan_owner); the plan answers' "owner" member names the same. */
#ifndef HV_SERVER_PLAN_OWNER_H
#define HV_SERVER_PLAN_OWNER_H

#include "request.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Whether a caller of role with token token_id may act on a plan whose
 *  owner is token owner_id (0: no owner). Asks nothing of anyone. */
bool hv_plan_owner_may_act(enum hv_role role, int64_t token_id, int64_t owner_id);

/** Writes into buf (len bytes) the detail of a refusal to `action` (a
 *  verb: "cancel", "retry") plan plan_id, naming its owner: the token's
 *  name, or "" for a plan with no submitter. */
void hv_plan_owner_refusal(char *buf, size_t len, const char *action, int64_t plan_id,
                           const char *owner);

/** The one check before an action on plan plan_id: returns true when req's
 *  caller may do it (an admin, without asking the database; the plan's
 *  owner). Otherwise answers — 403 not_owner naming the owner, 404 for
 *  an unknown plan, 503 or 500 when the database fails — and returns
 *  false. The action itself runs after: a plan's owner changes only when
 *  its token is revoked, after which the caller's token is refused anyway. */
bool hv_plan_owner_check(struct hv_request *req, int64_t plan_id, const char *action);

#endif
