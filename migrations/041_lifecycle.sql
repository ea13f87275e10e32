-- 041_lifecycle.sql — one lifecycle: a plan's state is stored, changes only
-- through hv_plan_transition(), and only a transition emits a plan's events.
--
-- Before, a plan's state was derived from its job counts wherever it was
-- read, and its events came from triggers that guessed its changes from
-- the statement at hand: the plan-end branch of the jobs statement trigger
-- (038, 040), the fleet parent's end (031, hv_webhook_parent_ended) and two
-- cancel triggers (011, 031). The statement that ends a round's last job
-- ran before server/db_rounds.c queued the next round in the same
-- transaction, so an adaptive plan sent plan.finished after every round.
--
-- Now:
--   * plans.state is one of plan_transitions' states; it changes only in
--     hv_plan_transition(pid, to_state, reason), which checks the pair
--     against plan_transitions, stamps ended_at and state_reason, and
--     emits what the row names: the webhook event, NOTIFY hv_jobs when a
--     fleet child ends (a slot of its siblings freed), and its fleet
--     parent's settling.
--   * hv_plan_settle(pid) asks which state the plan's facts call for
--     (plans.cancelled, the kept job counts, a parent's children) and
--     makes that transition. It runs at commit: a statement trigger on
--     jobs queues the plans whose jobs changed state (once per plan and
--     transaction, plan_settle_queue), and a DEFERRABLE INITIALLY DEFERRED
--     constraint trigger on the queue settles each at commit, after
--     whatever else the transaction did (a round's decision, a next
--     round's jobs). So a plan ends once, after its last round; the cost
--     is one queue row and one settle per plan a transaction touched,
--     whatever the number of jobs.
--   * jobs.status changes only as job_transitions allows: the BEFORE
--     trigger that stamps a job's state change (006) checks the pair and
--     raises for any other, and stamps finished_at of a job that ends.

-- A plan's states and the changes between them. event: what the change
-- sends (NULL: nothing); fallback: what a subscription that does not list
-- event but lists fallback gets instead (subscriptions made before
-- plan.cancelled existed got plan.failed for a cancellation).
CREATE TABLE plan_transitions (
    from_state text NOT NULL,
    to_state   text NOT NULL,
    event      text,
    fallback   text,
    PRIMARY KEY (from_state, to_state)
);
INSERT INTO plan_transitions (from_state, to_state, event, fallback) VALUES
    ('queued',  'running',   'plan.started',   NULL),
    ('queued',  'done',      'plan.finished',  NULL),          -- imported
    ('queued',  'failed',    'plan.failed',    NULL),          -- a hook or an apply failed first
    ('queued',  'cancelled', 'plan.cancelled', 'plan.failed'),
    ('running', 'done',      'plan.finished',  NULL),
    ('running', 'failed',    'plan.failed',    NULL),
    ('running', 'cancelled', 'plan.cancelled', 'plan.failed'),
    -- Corrections of an ended plan, without a second end event: a retry
    -- runs its failed jobs again (its end then sends its event again), a
    -- lapsed attempt's result arrives after the lapse failed the job, a
    -- setting changed under a done job (the host worker's telemetry).
    ('failed',  'running',   NULL,             NULL),
    ('failed',  'done',      NULL,             NULL),
    ('done',    'failed',    NULL,             NULL);

-- A job's changes of status. Any other raises.
CREATE TABLE job_transitions (
    from_status text NOT NULL,
    to_status   text NOT NULL,
    why         text NOT NULL,
    PRIMARY KEY (from_status, to_status)
);
INSERT INTO job_transitions (from_status, to_status, why) VALUES
    ('queued',  'running',   'claimed'),
    ('running', 'queued',    'released, its lease expired, or its group aborted'),
    ('running', 'done',      'its result is ok'),
    ('running', 'failed',    'its result is an error, its lease expired for good, or its group failed'),
    ('running', 'cancelled', 'its plan was cancelled'),
    ('queued',  'failed',    'its configuration or its group failed before it ran'),
    ('queued',  'cancelled', 'its plan was cancelled'),
    ('queued',  'done',      'a lapsed attempt delivered'),
    ('failed',  'done',      'a lapsed attempt delivered after the lapse failed it'),
    ('done',    'failed',    'a setting changed under it'),
    ('failed',  'queued',    'its plan was retried');

ALTER TABLE plans
    ADD COLUMN state text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    ADD COLUMN state_reason text,
    ADD COLUMN ended_at timestamptz;

-- The old emitters.
DROP TRIGGER jobs_webhooks ON jobs;
DROP FUNCTION hv_webhook_jobs_updated();
DROP TRIGGER plans_cancel_webhooks ON plans;
DROP FUNCTION hv_webhook_plan_trigger();
DROP TRIGGER plans_cancel_webhooks_parent ON plans;
DROP FUNCTION hv_webhook_parent_cancel_trigger();
DROP FUNCTION hv_webhook_parent_ended(bigint);

-- Whether plan p's row is a fleet's parent (lib/plan_fleet.h).
CREATE FUNCTION hv_plan_is_parent(spec jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_typeof(spec->'targets'->'host') = 'object';
$$;

-- The state plan pid's facts call for: cancelled once cancelled; a plan's
-- end once it has jobs and none is queued or running (done when all are);
-- a parent's end once every child ended (done when every child is);
-- running once a job (a child) was claimed, and ever after; else queued.
-- Reads the kept counts (016, 034), which the statement that changed the
-- jobs brought up to date.
CREATE FUNCTION hv_plan_state_due(pid bigint) RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
    p record;
    total bigint;
    open bigint;
    done bigint;
    started bigint;
BEGIN
    SELECT state, cancelled, hv_plan_is_parent(spec) AS parent INTO p FROM plans WHERE id = pid;
    IF NOT FOUND THEN
        RETURN NULL;
    ELSIF p.cancelled THEN
        RETURN 'cancelled';
    ELSIF p.parent THEN
        SELECT count(*), count(*) FILTER (WHERE c.state IN ('queued', 'running')),
               count(*) FILTER (WHERE c.state = 'done'),
               count(*) FILTER (WHERE c.state IN ('running', 'done', 'failed'))
          INTO total, open, done, started FROM plans c WHERE c.parent_id = pid;
    ELSE
        SELECT coalesce(sum(k.total), 0), coalesce(sum(k.queued + k.running), 0),
               coalesce(sum(k.done), 0), coalesce(sum(k.running + k.done + k.failed), 0)
          INTO total, open, done, started FROM plan_job_count_shards k WHERE k.plan_id = pid;
    END IF;
    IF total > 0 AND open = 0 THEN
        RETURN CASE WHEN done = total THEN 'done' ELSE 'failed' END;
    END IF;
    RETURN CASE WHEN started > 0 OR p.state <> 'queued' THEN 'running' ELSE 'queued' END;
END $$;

-- A plan event's payload: the plan as its transition left it, a parent's
-- job counts being its children's.
CREATE OR REPLACE FUNCTION hv_webhook_plan(pid bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('plan', jsonb_build_object('id', p.id, 'name', p.name,
        'status', p.state, 'host', p.spec->'targets'->'host', 'parent_id', p.parent_id,
        'children', (SELECT coalesce(jsonb_agg(ch.id ORDER BY ch.id), '[]') FROM plans ch
                     WHERE ch.parent_id = p.id),
        'jobs', jsonb_build_object('total', c.total, 'done', c.done, 'failed', c.failed,
                                   'cancelled', c.cancelled)))
    FROM plans p CROSS JOIN LATERAL (
        SELECT count(*) AS total,
               count(*) FILTER (WHERE j.status = 'done') AS done,
               count(*) FILTER (WHERE j.status = 'failed') AS failed,
               count(*) FILTER (WHERE j.status = 'cancelled') AS cancelled
        FROM jobs j JOIN plans o ON o.id = j.plan_id
        WHERE o.id = p.id OR o.parent_id = p.id) c
    WHERE p.id = pid;
$$;

-- Moves plan pid to to_state, for reason ('jobs', 'cancel', 'imported',
-- 'child', ...), and emits what the change does: the one place a plan's
-- state changes. Locks the plan's row; returns whether it changed (false:
-- it was in to_state already). A change plan_transitions does not list
-- raises. An imported plan's changes send no event (they happened
-- elsewhere).
CREATE FUNCTION hv_plan_transition(pid bigint, to_state text, reason text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    p plans%ROWTYPE;
    t plan_transitions%ROWTYPE;
    body jsonb;
BEGIN
    SELECT * INTO p FROM plans WHERE id = pid FOR UPDATE;
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

-- Brings plan pid to the state its facts call for (hv_plan_state_due).
-- The plan's row is locked before the state is asked for, so of two
-- transactions ending a plan's last jobs at once the second sees the
-- first's jobs and exactly one ends the plan. A change plan_transitions
-- does not list (facts that contradict the stored state) is left, with a
-- warning, rather than failing the transaction that stores results.
CREATE FUNCTION hv_plan_settle(pid bigint, reason text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    cur text;
    due text;
BEGIN
    SELECT state INTO cur FROM plans WHERE id = pid FOR UPDATE;
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

-- The plans a transaction changed, settled at its commit: one row per
-- plan and transaction (the transaction's id in the key, so transactions
-- never wait on each other's rows). locked: whether the settle must lock
-- the plan whatever its stored state (jobs ended, or anything but a claim);
-- a row for claims alone settles only a plan still queued.
CREATE TABLE plan_settle_queue (
    plan_id bigint NOT NULL,
    xact    bigint NOT NULL DEFAULT txid_current(),
    reason  text NOT NULL,
    locked  boolean NOT NULL,
    PRIMARY KEY (plan_id, xact)
);

CREATE FUNCTION hv_plan_settle_queued() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    q plan_settle_queue%ROWTYPE;
BEGIN
    DELETE FROM plan_settle_queue WHERE plan_id = NEW.plan_id AND xact = NEW.xact RETURNING * INTO q;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    -- Claims of a plan already running change nothing; no lock for them.
    IF NOT q.locked AND EXISTS (SELECT 1 FROM plans WHERE id = q.plan_id AND state <> 'queued') THEN
        RETURN NULL;
    END IF;
    PERFORM hv_plan_settle(q.plan_id, q.reason);
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER plan_settle_at_commit AFTER INSERT ON plan_settle_queue
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION hv_plan_settle_queued();

-- Queues the plans whose jobs this statement moved: every plan with a job
-- that ended or came back from an end, and a plan still queued with a
-- job claimed. A release (running back to queued) changes no plan.
CREATE FUNCTION hv_lifecycle_jobs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO plan_settle_queue AS s (plan_id, reason, locked)
    SELECT c.plan_id, 'jobs', c.locked
    FROM (SELECT n.plan_id, bool_or(o.status <> 'queued' OR n.status <> 'running') AS locked
          FROM old_rows o JOIN new_rows n ON n.id = o.id
          WHERE o.status <> n.status AND NOT (o.status = 'running' AND n.status = 'queued')
          GROUP BY n.plan_id) c
    WHERE c.locked OR EXISTS (SELECT 1 FROM plans p WHERE p.id = c.plan_id AND p.state = 'queued')
    ORDER BY c.plan_id
    ON CONFLICT (plan_id, xact) DO UPDATE SET locked = s.locked OR excluded.locked;
    RETURN NULL;
END $$;
CREATE TRIGGER jobs_lifecycle AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_lifecycle_jobs_updated();

-- Jobs stored with a state of their own (an import, a plan import): their
-- plans settle as imported, without events.
CREATE FUNCTION hv_lifecycle_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO plan_settle_queue (plan_id, reason, locked)
    SELECT DISTINCT n.plan_id, 'imported', true FROM new_rows n WHERE n.status <> 'queued'
    ORDER BY n.plan_id
    ON CONFLICT (plan_id, xact) DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER jobs_lifecycle_insert AFTER INSERT ON jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_lifecycle_jobs_inserted();

-- A cancellation (and a plan imported cancelled) settles too: a plan
-- without open jobs (a fleet's parent) has no job that would queue it.
CREATE FUNCTION hv_lifecycle_plan_cancelled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO plan_settle_queue (plan_id, reason, locked)
    VALUES (NEW.id, CASE WHEN TG_OP = 'INSERT' THEN 'imported' ELSE 'cancel' END, true)
    ON CONFLICT (plan_id, xact) DO UPDATE SET reason = excluded.reason, locked = true;
    RETURN NULL;
END $$;
CREATE TRIGGER plans_lifecycle_cancel AFTER UPDATE OF cancelled ON plans
    FOR EACH ROW WHEN (NEW.cancelled AND NOT OLD.cancelled)
    EXECUTE FUNCTION hv_lifecycle_plan_cancelled();
CREATE TRIGGER plans_lifecycle_insert AFTER INSERT ON plans
    FOR EACH ROW WHEN (NEW.cancelled)
    EXECUTE FUNCTION hv_lifecycle_plan_cancelled();

-- A job's change of status: checked against job_transitions, then stamped
-- (006's times, and finished_at of a job that ended or came back).
CREATE OR REPLACE FUNCTION hv_job_state_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM job_transitions
                   WHERE from_status = OLD.status AND to_status = NEW.status) THEN
        RAISE EXCEPTION 'job %: no transition from % to %', OLD.id, OLD.status, NEW.status
            USING ERRCODE = 'check_violation';
    END IF;
    NEW.state_at := now();
    IF NEW.status = 'running' AND NEW.first_claimed_at IS NULL THEN
        NEW.first_claimed_at := now();
    END IF;
    IF NEW.status IN ('done', 'failed', 'cancelled') THEN
        NEW.finished_at := coalesce(NEW.finished_at, now());
    END IF;
    RETURN NEW;
END $$;

-- The plans there are: the state their facts call for, without events.
UPDATE plans p SET state = s.due, state_reason = 'migrated',
       ended_at = CASE WHEN s.due IN ('done', 'failed', 'cancelled')
                       THEN coalesce(p.cancelled_at, s.last, p.updated_at) END
FROM (SELECT c.id, hv_plan_state_due(c.id) AS due,
             (SELECT max(k.finished_max) FROM plan_job_count_shards k WHERE k.plan_id = c.id) AS last
      FROM plans c WHERE c.parent_id IS NOT NULL OR NOT hv_plan_is_parent(c.spec)) s
WHERE p.id = s.id AND s.due <> p.state;
-- Parents after their children.
UPDATE plans p SET state = s.due, state_reason = 'migrated',
       ended_at = CASE WHEN s.due IN ('done', 'failed', 'cancelled')
                       THEN coalesce(p.cancelled_at, s.last, p.updated_at) END
FROM (SELECT c.id, hv_plan_state_due(c.id) AS due,
             (SELECT max(ch.ended_at) FROM plans ch WHERE ch.parent_id = c.id) AS last
      FROM plans c WHERE c.parent_id IS NULL AND hv_plan_is_parent(c.spec)) s
WHERE p.id = s.id AND s.due <> p.state;

-- The view of 034_job_triggers.sql, its columns unchanged: a plan's status
-- is its stored state.
CREATE OR REPLACE VIEW plan_summaries AS
SELECT p.id, p.name, p.spec, p.seed, p.cancelled, p.created_at, p.updated_at,
       c.total, c.queued, c.running, c.done, c.failed, c.cancelled_jobs,
       p.state AS status,
       p.cancelled_at,
       c.started_at,
       c.state_at,
       c.finished_max,
       p.waiting,
       ARRAY(SELECT n FROM unnest(c.queued_targets) AS n
             WHERE NOT EXISTS (SELECT 1 FROM targets t WHERE t.name = n)
             ORDER BY n) AS unregistered,
       p.adaptive,
       p.parent_id,
       CASE WHEN p.parent_id IS NOT NULL AND NOT p.cancelled AND c.queued > 0
                 AND c.running = 0 AND NOT hv_plan_admitted(p.id)
            THEN 'waiting for a slot: max_parallel_hosts='
                 || (SELECT q.max_parallel_hosts FROM plans q WHERE q.id = p.parent_id)
       END AS slot_wait
FROM plans p
CROSS JOIN LATERAL (
    SELECT coalesce(sum(k.total), 0)::bigint AS total,
           coalesce(sum(k.queued), 0)::bigint AS queued,
           coalesce(sum(k.running), 0)::bigint AS running,
           coalesce(sum(k.done), 0)::bigint AS done,
           coalesce(sum(k.failed), 0)::bigint AS failed,
           coalesce(sum(k.cancelled), 0)::bigint AS cancelled_jobs,
           min(k.started_at) AS started_at,
           max(k.state_at) AS state_at,
           max(k.finished_max) AS finished_max,
           array_agg(k.target_name ORDER BY k.target_name)
               FILTER (WHERE k.queued > 0) AS queued_targets
    FROM (SELECT * FROM plan_job_counts k0 WHERE k0.plan_id = p.id
          UNION ALL
          SELECT k1.* FROM plans ch
          CROSS JOIN LATERAL (SELECT * FROM plan_job_counts k2 WHERE k2.plan_id = ch.id) k1
          WHERE ch.parent_id = p.id) k
) c;
