-- 014_plan_export.sql — a plan with all its results as one JSON document
-- (GET /api/v1/plans/{id}/export), and that document stored back as a new
-- plan, on this server or another (POST /api/v1/plans/import). The
-- document carries the plan (name, spec, seed, times), its configurations,
-- its job groups, and per job its results with their metrics, samples,
-- observations and raw output; a job's group is named by the group's index
-- and its configuration by the configuration's, so the ids of the server
-- it came from mean nothing where it goes. Apply and restore steps, host
-- telemetry and the targets' facts stay where they were measured.

-- Times are written in UTC, whatever the session's time zone.
CREATE FUNCTION hv_plan_export(pid bigint) RETURNS jsonb
LANGUAGE sql STABLE SET TimeZone = 'UTC' AS $$
    SELECT jsonb_build_object(
        'format', 'hvbench-plan/1',
        'exported_at', now(),
        'plan', jsonb_build_object('id', p.id, 'name', p.name, 'spec', p.spec, 'seed', p.seed,
            'cancelled', p.cancelled, 'created_at', p.created_at, 'cancelled_at', p.cancelled_at),
        'configurations', coalesce((SELECT jsonb_agg(jsonb_build_object('idx', c.idx, 'name',
            c.name, 'levels', c.levels) ORDER BY c.idx) FROM configurations c
            WHERE c.plan_id = p.id), '[]'),
        'groups', coalesce((SELECT jsonb_agg(jsonb_build_object('idx', g.idx, 'size', g.size)
            ORDER BY g.idx) FROM job_groups g WHERE g.plan_id = p.id), '[]'),
        'jobs', coalesce((SELECT jsonb_agg(jsonb_build_object(
            'id', j.id, 'configuration', c.idx, 'group', g.idx, 'role', j.role,
            'workload_id', j.workload_id, 'workload', j.workload, 'target', j.target_name,
            'repetition', j.repetition, 'run_order', j.run_order, 'status', j.status,
            'attempt', j.attempt, 'error', j.error, 'claimed_at', j.claimed_at,
            'finished_at', j.finished_at,
            'results', coalesce((SELECT jsonb_agg(jsonb_build_object(
                'attempt', r.attempt, 'status', r.status, 'error', r.error,
                'started_at', r.started_at, 'finished_at', r.finished_at,
                'received_at', r.received_at, 'observed', r.observed, 'raw', r.raw,
                'metrics', coalesce((SELECT jsonb_agg(jsonb_build_object('name', m.name,
                    'value', m.value, 'unit', m.unit, 'higher_is_better', m.higher_is_better)
                    ORDER BY m.name) FROM metrics m WHERE m.result_id = r.id), '[]'),
                'samples', coalesce((SELECT jsonb_agg(jsonb_build_object('metric', s.metric,
                    't', s.t, 'value', s.value) ORDER BY s.metric, s.t) FROM samples s
                    WHERE s.result_id = r.id), '[]')) ORDER BY r.attempt)
                FROM results r WHERE r.job_id = j.id), '[]'))
            ORDER BY j.run_order, j.id)
            FROM jobs j JOIN configurations c ON c.id = j.config_id
            LEFT JOIN job_groups g ON g.id = j.group_id WHERE j.plan_id = p.id), '[]'))
    FROM plans p WHERE p.id = pid;
$$;

-- Stores an exported document as a new plan and returns its id. The caller
-- has checked the document's shape; a job that had not ended where it came
-- from is refused here (it would wait for a target of that server).
CREATE FUNCTION hv_plan_import(doc jsonb, token bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    pid bigint;
    j jsonb;
    r jsonb;
    jid bigint;
    rid bigint;
BEGIN
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(doc->'jobs') x
               WHERE x->>'status' NOT IN ('done', 'failed', 'cancelled')) THEN
        RAISE EXCEPTION 'a job of the document has not ended' USING ERRCODE = '22023';
    END IF;
    INSERT INTO plans (name, spec, seed, cancelled, created_at, cancelled_at, token_id)
    VALUES (doc->'plan'->>'name', doc->'plan'->'spec', (doc->'plan'->>'seed')::bigint,
            coalesce((doc->'plan'->>'cancelled')::boolean, false),
            coalesce((doc->'plan'->>'created_at')::timestamptz, now()),
            (doc->'plan'->>'cancelled_at')::timestamptz, nullif(token, 0))
    RETURNING id INTO pid;
    INSERT INTO configurations (plan_id, idx, name, levels)
    SELECT pid, (c->>'idx')::int, c->>'name', coalesce(c->'levels', '{}')
    FROM jsonb_array_elements(doc->'configurations') c;
    INSERT INTO job_groups (plan_id, idx, size)
    SELECT pid, (g->>'idx')::int, (g->>'size')::int FROM jsonb_array_elements(doc->'groups') g;
    FOR j IN SELECT x FROM jsonb_array_elements(doc->'jobs') x LOOP
        INSERT INTO jobs (plan_id, config_id, group_id, role, workload_id, workload, target_name,
                          repetition, run_order, status, attempt, error, claimed_at,
                          first_claimed_at, finished_at, state_at)
        SELECT pid, c.id, g.id, j->>'role', j->>'workload_id', j->'workload', j->>'target',
               (j->>'repetition')::int, (j->>'run_order')::int, j->>'status',
               coalesce((j->>'attempt')::int, 0), j->>'error', (j->>'claimed_at')::timestamptz,
               (j->>'claimed_at')::timestamptz, (j->>'finished_at')::timestamptz,
               (j->>'finished_at')::timestamptz
        FROM configurations c LEFT JOIN job_groups g ON g.plan_id = pid
             AND g.idx = (j->>'group')::int
        WHERE c.plan_id = pid AND c.idx = (j->>'configuration')::int
        RETURNING id INTO jid;
        IF jid IS NULL THEN
            RAISE EXCEPTION 'a job names a configuration the document does not have'
                USING ERRCODE = '22023';
        END IF;
        FOR r IN SELECT x FROM jsonb_array_elements(coalesce(j->'results', '[]')) x LOOP
            INSERT INTO results (job_id, attempt, status, error, started_at, finished_at,
                                 received_at, observed, raw)
            VALUES (jid, (r->>'attempt')::int, r->>'status', r->>'error',
                    (r->>'started_at')::timestamptz, (r->>'finished_at')::timestamptz,
                    coalesce((r->>'received_at')::timestamptz, now()),
                    coalesce(r->'observed', '{}'), r->>'raw')
            RETURNING id INTO rid;
            INSERT INTO metrics (result_id, name, value, unit, higher_is_better)
            SELECT rid, m.name, m.value, coalesce(m.unit, ''), coalesce(m.higher_is_better, true)
            FROM jsonb_to_recordset(coalesce(r->'metrics', '[]')) AS m(name text, value float8,
                 unit text, higher_is_better boolean);
            INSERT INTO samples (result_id, metric, t, value)
            SELECT rid, s.metric, s.t, s.value
            FROM jsonb_to_recordset(coalesce(r->'samples', '[]')) AS s(metric text, t float8,
                 value float8);
        END LOOP;
    END LOOP;
    RETURN pid;
END;
$$;
