-- 045_plan_lock.sql — a plan's lock that waiters queue for in order.
--
-- hv_plan_settle (041) locked the plan's row (SELECT ... FOR UPDATE) at
-- the commit of every transaction that ended one of the plan's jobs. A
-- row lock is taken without queueing by whoever finds the row free, and
-- a waiter only wakes to try again: with many results of one plan
-- committed back to back (one server's batch lane, 200 workers), one
-- transaction found the row locked by the next result each time it woke
-- and gave up after lock_timeout (10 s), failing its COMMIT.
--
-- A plan's lock is now a transaction-scoped advisory lock (class 742200,
-- the plan's id): requests wait in the order they came. The row itself
-- is locked FOR NO KEY UPDATE, which inserts referencing the plan (their
-- foreign key checks take FOR KEY SHARE, also ahead of any waiter) never
-- conflict with. Whoever changes
-- a plan's state, or decides from its state, takes it first and then any
-- row lock, so no two transactions wait on each other in a circle:
-- hv_plan_settle, hv_plan_transition, the round decision
-- (server/db_rounds.c), a cancel (server/db_plan_cancel.c) and a retry
-- (server/db_admin.c). (742199 with a plan's id is the claim lock of a
-- plan with max_parallel_hosts, server/db_job_claim.c.)

CREATE FUNCTION hv_plan_lock(pid bigint) RETURNS void LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(742200, (pid % 2147483647)::int);
$$;

-- As in 041, under the plan's lock: the state read after the lock is the
-- one the previous holder committed.
CREATE OR REPLACE FUNCTION hv_plan_settle(pid bigint, reason text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    cur text;
    due text;
BEGIN
    PERFORM hv_plan_lock(pid);
    SELECT state INTO cur FROM plans WHERE id = pid;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    due := hv_plan_state_due(pid);
    IF due = cur THEN
        RETURN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM plan_transitions WHERE from_state = cur AND to_state = due) THEN
        RAISE WARNING 'plan %: state % kept, its facts say % (%)', pid, cur, due, reason;
        RETURN;
    END IF;
    PERFORM hv_plan_transition(pid, due, reason);
END $$;

-- As in 041, the plan's lock taken first, and the row locked FOR NO KEY
-- UPDATE: a state change is not a key change, and this mode does not wait
-- for (nor make wait) the key-share locks that inserts referencing the
-- plan take (a claim's job counts, a next round's jobs).
CREATE OR REPLACE FUNCTION hv_plan_transition(pid bigint, to_state text, reason text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    p plans%ROWTYPE;
    t plan_transitions%ROWTYPE;
    body jsonb;
BEGIN
    PERFORM hv_plan_lock(pid);
    SELECT * INTO p FROM plans WHERE id = pid FOR NO KEY UPDATE;
    IF NOT FOUND OR p.state = to_state THEN
        RETURN false;
    END IF;
    SELECT * INTO t FROM plan_transitions x WHERE x.from_state = p.state AND x.to_state = $2;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'plan %: no transition from % to % (%)', pid, p.state, to_state, reason
            USING ERRCODE = 'check_violation';
    END IF;
    UPDATE plans SET state = to_state, state_reason = reason,
           ended_at = CASE WHEN to_state IN ('done', 'failed', 'cancelled')
                           THEN coalesce(cancelled_at, now()) END
     WHERE id = pid;
    IF t.event IS NOT NULL AND reason <> 'imported' THEN
        body := hv_webhook_plan(pid);
        INSERT INTO webhook_deliveries (webhook_id, event, payload)
        SELECT w.id, e.ev, jsonb_build_object('event', e.ev, 'at', now()) || body
        FROM webhooks w CROSS JOIN LATERAL (SELECT CASE WHEN t.event = ANY (w.events) THEN t.event
                                            WHEN t.fallback = ANY (w.events) THEN t.fallback
                                            END AS ev) e
        WHERE w.deleted_at IS NULL AND e.ev IS NOT NULL;
        IF FOUND THEN
            PERFORM pg_notify('hv_webhooks', '');
        END IF;
    END IF;
    IF p.parent_id IS NOT NULL THEN
        IF to_state IN ('done', 'failed', 'cancelled') THEN
            -- A sibling waiting for a slot may be claimable now.
            PERFORM pg_notify('hv_jobs', '');
        END IF;
        PERFORM hv_plan_settle(p.parent_id, 'child');
    END IF;
    RETURN true;
END $$;
