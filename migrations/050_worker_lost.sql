-- 050_worker_lost.sql — a lost worker is visible.
--
-- Before, a worker killed in the middle of a job or a step left nothing
-- behind but a lease that ran out: the job went back to the queue (or the
-- step), the plan said `waiting: null`, nothing told that the target's
-- worker was gone, and a host kept the plan's settings until somebody
-- started its worker again.
--
-- Now:
--   * hv_worker_stale(last_seen, window_s) is the one definition of a
--     target or worker that was not seen: not for longer than window_s
--     seconds (the server passes its lease, --lease). Every answer that
--     shows `stale` and the loss below call it.
--   * When a job's or a step's lease runs out (the two statements that
--     decide it, server/db_job_lease.c and server/db_steps.c, call
--     hv_worker_lost) and the worker that held it is stale, its target's
--     worker is lost: one open row of worker_losses per target (so once
--     per loss, however many leases run out), a `worker.lost` webhook
--     event at its opening, and the plans it holds up wait with reason
--     `worker_lost`, the detail naming the target, when its worker was
--     last seen and what the host may still carry (its target_changes not
--     restored).
--   * hv_worker_found(tid): the target's worker was seen again (a call
--     with its credential, server/db_workers.c; a registration,
--     server/db_targets.c): its open loss ends and its plans stop waiting
--     for it.
--
-- Precedence of a plan's waiting reasons: waiting_for_slot (computed when
-- read) first, then the stored one; worker_lost is stored only over no
-- reason or an earlier worker_lost, never over waiting_for_operator or
-- before_host_hook, which name what the plan waits for and are cleared by
-- their own end (the loss still shows in its event and in the target's
-- `stale`).

-- Whether a target or worker last seen at last_seen is stale: not seen
-- for longer than window_s seconds. last_seen is written at most every
-- 5 s (server/db_workers.c), so a window under about 10 s can call a
-- live worker stale.
CREATE FUNCTION hv_worker_stale(last_seen timestamptz, window_s integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT last_seen < now() - make_interval(secs => window_s)
$$;

-- A target's lost worker: opened by hv_worker_lost, ended (found_at) by
-- hv_worker_found. plan_ids: the plans it holds up; detail: the words of
-- their waiting and of the event.
CREATE TABLE worker_losses (
    id        bigserial PRIMARY KEY,
    target_id bigint NOT NULL REFERENCES targets (id) ON DELETE CASCADE,
    worker_id bigint NOT NULL,
    last_seen timestamptz NOT NULL,
    plan_ids  bigint[] NOT NULL,
    detail    text NOT NULL,
    lost_at   timestamptz NOT NULL DEFAULT now(),
    found_at  timestamptz
);
CREATE UNIQUE INDEX worker_losses_open ON worker_losses (target_id) WHERE found_at IS NULL;

-- "hv01's worker last seen 19:52:05 UTC; its host may still carry plan
-- 6's settings (thp=never, readahead_kb=2048) until the worker restarts or
-- runs --restore": the settings are the latest value of each factor the
-- plans among pids changed on target tname and nothing restored yet; the
-- clause after the time only when there are such.
CREATE FUNCTION hv_worker_lost_detail(tname text, seen timestamptz, pids bigint[]) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT tname || '''s worker last seen ' || to_char(seen AT TIME ZONE 'UTC', 'HH24:MI:SS')
           || ' UTC' || coalesce('; its host may still carry '
           || string_agg('plan ' || x.plan_id || '''s settings (' || x.settings || ')', ' and '
                         ORDER BY x.plan_id)
           || ' until the worker restarts or runs --restore', '')
      FROM (SELECT c.plan_id, string_agg(DISTINCT c.factor || '=' || coalesce(c.to_value, ''),
                                         ', ' ORDER BY c.factor || '=' || coalesce(c.to_value, ''))
                              AS settings
              FROM (SELECT DISTINCT ON (plan_id, factor, object) plan_id, factor, to_value
                      FROM target_changes
                     WHERE target_name = tname AND plan_id = ANY (pids) AND restored_at IS NULL
                     ORDER BY plan_id, factor, object, changed_at DESC, id DESC) c
             GROUP BY c.plan_id) x
$$;

-- A plan's waiting for loss l.
CREATE FUNCTION hv_worker_loss_waiting(l worker_losses) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('reason', 'worker_lost', 'since', l.lost_at, 'detail', l.detail,
                              'target', t.name, 'last_seen', l.last_seen)
      FROM targets t WHERE t.id = l.target_id
$$;

-- The leases worker wid held on plans pids ran out. When it is live
-- (ended workers were replaced or signed off) and stale (hv_worker_stale
-- with window_s), its target's worker is lost: the target's open loss is
-- opened, with a worker.lost event, or grows by the plans it did not hold
-- up yet. The plans held up are pids and the plans holding the target as
-- their host; those not ended and waiting for nothing or for a
-- worker_lost wait for it.
-- Takes the target's row lock, so two sweeps open one loss. Returns
-- whether it opened one.
CREATE FUNCTION hv_worker_lost(wid bigint, pids bigint[], window_s integer) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    w record;
    l worker_losses%ROWTYPE;
    opened boolean := false;
BEGIN
    SELECT x.target_id, x.last_seen INTO w FROM workers x
     WHERE x.id = wid AND x.ended_at IS NULL;
    IF NOT FOUND OR NOT hv_worker_stale(w.last_seen, window_s) THEN
        RETURN false;
    END IF;
    PERFORM 1 FROM targets WHERE id = w.target_id FOR UPDATE;
    SELECT * INTO l FROM worker_losses WHERE target_id = w.target_id AND found_at IS NULL;
    IF NOT FOUND THEN
        INSERT INTO worker_losses (target_id, worker_id, last_seen, plan_ids, detail)
        VALUES (w.target_id, wid, w.last_seen, '{}', '') RETURNING * INTO l;
        opened := true;
    END IF;
    l.plan_ids := ARRAY(SELECT DISTINCT u FROM unnest(l.plan_ids || pids || ARRAY(
                            SELECT p.id FROM plans p JOIN targets t ON t.name = p.host_name
                             WHERE t.id = w.target_id AND p.holds_host)) u
                         WHERE u IS NOT NULL ORDER BY u);
    l.detail := hv_worker_lost_detail((SELECT name FROM targets WHERE id = w.target_id),
                                      l.last_seen, l.plan_ids);
    UPDATE worker_losses SET plan_ids = l.plan_ids, detail = l.detail WHERE id = l.id;
    UPDATE plans SET waiting = hv_worker_loss_waiting(l), updated_at = now()
     WHERE id = ANY (l.plan_ids) AND state IN ('queued', 'running')
       AND (waiting IS NULL OR waiting->>'reason' = 'worker_lost');
    IF opened THEN
        INSERT INTO webhook_deliveries (webhook_id, event, payload)
        SELECT h.id, 'worker.lost', jsonb_build_object('event', 'worker.lost', 'at', now(),
               'target', t.name, 'target_id', t.id, 'worker_id', wid, 'last_seen', l.last_seen,
               'plan_ids', to_jsonb(l.plan_ids), 'detail', l.detail)
          FROM webhooks h, targets t
         WHERE t.id = w.target_id AND h.deleted_at IS NULL AND 'worker.lost' = ANY (h.events);
        IF FOUND THEN
            PERFORM pg_notify('hv_webhooks', '');
        END IF;
    END IF;
    RETURN opened;
END $$;

-- Target tid's worker was seen again: its open loss ends, and each plan
-- that waited for it waits for another open loss holding it up, else for
-- nothing. Returns whether a loss ended. Cheap when there is none (one
-- probe of worker_losses_open), as on almost every call.
CREATE FUNCTION hv_worker_found(tid bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    l worker_losses%ROWTYPE;
BEGIN
    UPDATE worker_losses SET found_at = now() WHERE target_id = tid AND found_at IS NULL
    RETURNING * INTO l;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE plans p SET updated_at = CASE WHEN p.state IN ('queued', 'running') THEN now()
                                         ELSE p.updated_at END, waiting = (
               SELECT hv_worker_loss_waiting(o) FROM worker_losses o
                WHERE o.found_at IS NULL AND p.id = ANY (o.plan_ids)
                ORDER BY o.lost_at DESC, o.id DESC LIMIT 1)
     WHERE p.id = ANY (l.plan_ids) AND p.waiting->>'reason' = 'worker_lost'
       AND p.waiting->>'target' = (SELECT name FROM targets WHERE id = tid);
    RETURN true;
END $$;
