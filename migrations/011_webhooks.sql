-- 011_webhooks.sql — webhook subscriptions and their durable delivery queue.
-- An event is written to webhook_deliveries in the same transaction as the
-- change it reports (a trigger below, or the server), one row per
-- subscription that listens to it, so a delivery is never lost to a crash;
-- the server's delivery thread sends each row until its receiver answers
-- 2xx or its attempts run out (at least once: a receiver may see a
-- delivery twice, its Hvbench-Delivery id tells).
CREATE TABLE webhooks (
    id            bigserial PRIMARY KEY,
    url           text NOT NULL,
    events        text[] NOT NULL,
    description   text NOT NULL DEFAULT '',
    -- The signing key: HMAC needs it in the clear (it is shown once, at
    -- creation, and never again by the API).
    secret        text NOT NULL,
    -- Loopback, link-local and private addresses are refused unless an
    -- admin allowed them for this subscription.
    allow_private boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    token_id      bigint REFERENCES tokens,
    deleted_at    timestamptz
);

CREATE TABLE webhook_deliveries (
    id           bigserial PRIMARY KEY,
    webhook_id   bigint NOT NULL REFERENCES webhooks ON DELETE CASCADE,
    event        text NOT NULL,
    payload      jsonb NOT NULL,
    status       text NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts     integer NOT NULL DEFAULT 0,
    next_at      timestamptz NOT NULL DEFAULT now(),
    -- Set while a server sends the row, so two servers never send it at once.
    locked_until timestamptz,
    last_status  integer,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_hook_idx ON webhook_deliveries (webhook_id, id DESC);

-- Queues event for every live subscription that listens to it.
CREATE FUNCTION hv_webhook_enqueue(ev text, body jsonb) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO webhook_deliveries (webhook_id, event, payload)
    SELECT w.id, ev, jsonb_build_object('event', ev, 'at', now()) || body
    FROM webhooks w WHERE w.deleted_at IS NULL AND ev = ANY (w.events);
    SELECT pg_notify('hv_webhooks', '') WHERE EXISTS (SELECT 1 FROM webhooks w
        WHERE w.deleted_at IS NULL AND ev = ANY (w.events));
$$;

-- What a plan event carries: the plan as its summary counts it.
CREATE FUNCTION hv_webhook_plan(pid bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('plan', jsonb_build_object('id', s.id, 'name', s.name,
        'status', s.status, 'host', s.spec->'targets'->'host', 'jobs', jsonb_build_object(
        'total', s.total, 'done', s.done, 'failed', s.failed, 'cancelled', s.cancelled_jobs)))
    FROM plan_summaries s WHERE s.id = pid;
$$;

-- plan.started when a plan's first job is claimed; plan.finished when its
-- last open job ended and every job is done, plan.failed when it ended
-- otherwise. The plan's row is locked first, so of two jobs ending at once
-- in two transactions the second sees the first and exactly one of them
-- sends the event; a cancelled plan's event comes from the cancellation.
CREATE FUNCTION hv_webhook_job_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    p plans%ROWTYPE;
    open_jobs bigint;
    not_done bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhooks WHERE deleted_at IS NULL) THEN
        RETURN NULL;
    END IF;
    SELECT * INTO p FROM plans WHERE id = NEW.plan_id FOR UPDATE;
    IF p.cancelled THEN
        RETURN NULL;
    END IF;
    IF OLD.status = 'queued' AND NEW.status = 'running' AND NEW.attempt = 1 THEN
        IF NOT EXISTS (SELECT 1 FROM jobs WHERE plan_id = NEW.plan_id AND id <> NEW.id
                       AND (attempt > 0 OR status <> 'queued')) THEN
            PERFORM hv_webhook_enqueue('plan.started', hv_webhook_plan(NEW.plan_id));
        END IF;
    ELSIF OLD.status IN ('queued', 'running') AND NEW.status NOT IN ('queued', 'running') THEN
        SELECT count(*) FILTER (WHERE status IN ('queued', 'running')),
               count(*) FILTER (WHERE status <> 'done')
          INTO open_jobs, not_done FROM jobs WHERE plan_id = NEW.plan_id;
        IF open_jobs = 0 THEN
            PERFORM hv_webhook_enqueue(CASE WHEN not_done = 0 THEN 'plan.finished'
                                       ELSE 'plan.failed' END, hv_webhook_plan(NEW.plan_id));
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER jobs_webhooks AFTER UPDATE OF status ON jobs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION hv_webhook_job_trigger();

CREATE FUNCTION hv_webhook_plan_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hv_webhook_enqueue('plan.failed', hv_webhook_plan(NEW.id));
    RETURN NULL;
END;
$$;
CREATE TRIGGER plans_cancel_webhooks AFTER UPDATE OF cancelled ON plans
    FOR EACH ROW WHEN (NEW.cancelled AND NOT OLD.cancelled)
    EXECUTE FUNCTION hv_webhook_plan_trigger();

-- changepoint.new when the history finds a change point it had not found.
CREATE FUNCTION hv_webhook_cp_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hv_webhook_enqueue('changepoint.new', jsonb_build_object('change_point',
        to_jsonb(NEW) - 'context', 'series', (SELECT jsonb_build_object('id', hs.id, 'target',
        t.name, 'target_id', t.id, 'workload', hs.workload, 'metric', hs.metric,
        'configuration', hs.configuration) FROM history_series hs JOIN targets t
        ON t.id = hs.target_id WHERE hs.id = NEW.series_id)));
    RETURN NULL;
END;
$$;
CREATE TRIGGER change_points_webhooks AFTER INSERT ON change_points
    FOR EACH ROW EXECUTE FUNCTION hv_webhook_cp_trigger();
