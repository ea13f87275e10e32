-- 030_plan_reads.sql — what a plan read asks for only now and then, as
-- functions the read calls only when it needs them.
--
-- GET /api/v1/plans/{id} read the plan_summaries view (016, 022) and then
-- the plan's fleet and its hooks, three statements; the view's unregistered
-- targets (an anti-join of the queued targets with targets, planned once for
-- each of the five places the answer names it) and a fleet child's slot were
-- part of every execution's plan even for a plan that ended. The read is now
-- one statement over plans and plan_job_counts (server/db_plan_read.c,
-- plan_read); what a plan waits for, a fleet's side of its summary, a fleet
-- parent's children and a plan's hooks come from these functions, called
-- only for a plan that can need them: PostgreSQL sets up every subquery of
-- a statement on each execution, run or not, while plpgsql keeps its
-- functions' plans and a read that does not call them pays nothing.

-- What a plan whose queued jobs name the targets names waits for when no
-- worker ever registered some of them (since: the plan's creation): five
-- named, then a count. NULL when every one registered.
CREATE FUNCTION hv_plan_waiting_unregistered(since timestamptz, names text[]) RETURNS json
LANGUAGE plpgsql STABLE AS $$
DECLARE
    missing text[];
BEGIN
    SELECT array_agg(n ORDER BY n) INTO missing FROM unnest(names) n
    WHERE NOT EXISTS (SELECT 1 FROM targets t WHERE t.name = n);
    IF missing IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN json_build_object('reason', 'target_unregistered', 'since', since, 'detail',
        'waiting for target' || CASE WHEN cardinality(missing) > 1 THEN 's ' ELSE ' ' END
        || array_to_string(missing[1:5], ', ')
        || CASE WHEN cardinality(missing) > 5
                THEN ' and ' || (cardinality(missing) - 5) || ' more' ELSE '' END
        || ' (never registered)');
END $$;

-- What a fleet plan's child with queued jobs and none running waits for
-- while its older siblings hold every slot (022_fleet_plans.sql's
-- slot_wait); NULL when it has a slot.
CREATE FUNCTION hv_plan_slot_wait(pid bigint) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    slots integer;
BEGIN
    SELECT q.max_parallel_hosts INTO slots FROM plans p JOIN plans q ON q.id = p.parent_id
    WHERE p.id = pid;
    IF slots IS NULL OR hv_plan_open_siblings(pid) < slots THEN
        RETURN NULL;
    END IF;
    RETURN 'waiting for a slot: max_parallel_hosts=' || slots;
END $$;

-- A fleet plan's side of its summary: the parent of a child; a parent's
-- max_parallel_hosts and its children (id, host, status, progress,
-- waiting), nulls left out; {} for a plan outside a fleet.
CREATE FUNCTION hv_plan_fleet(pid bigint) RETURNS json
LANGUAGE sql STABLE AS $$
    SELECT json_strip_nulls(json_build_object('parent_id', p.parent_id, 'max_parallel_hosts',
        p.max_parallel_hosts, 'children', (SELECT json_agg(json_build_object('id', s.id, 'host',
        s.spec->'targets'->>'host', 'status', s.status, 'progress', CASE WHEN s.total = 0 THEN 0
        ELSE round((s.done + s.failed + s.cancelled_jobs)::numeric / s.total, 4) END, 'waiting',
        s.slot_wait) ORDER BY s.id) FROM plan_summaries s WHERE s.parent_id = p.id)))
    FROM plans p WHERE p.id = pid;
$$;

-- A plan's drain hooks (024_drain_hooks.sql) and what they answered,
-- before_host first; NULL for a plan without any.
CREATE FUNCTION hv_plan_hooks(pid bigint) RETURNS json
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT json_agg(json_build_object('id', s.id, 'kind', s.kind, 'target',
        s.target_name, 'hook', s.hook, 'status', s.status, 'attempts', s.attempt, 'started_at',
        s.claimed_at, 'finished_at', s.finished_at, 'error', s.error, 'answer', s.answer)
        ORDER BY s.kind = 'after_host', s.id) FROM plan_steps s
        WHERE s.plan_id = pid AND s.kind IN ('before_host', 'after_host'));
END $$;

-- The children of a fleet plan, in id order.
CREATE FUNCTION hv_plan_children(pid bigint) RETURNS bigint[]
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN ARRAY(SELECT id FROM plans WHERE parent_id = pid ORDER BY id);
END $$;
