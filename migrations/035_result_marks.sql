-- 035_result_marks.sql — the history marks of results and metrics without
-- planning a statement on each result.
--
-- 034_job_triggers.sql had the triggers of results and metrics pass the
-- job ids of their rows to history_mark_done_jobs(ids), whose query
-- (j.id = ANY (ids)) PostgreSQL planned again on every call: a custom plan
-- for each array looked cheaper than the generic one. That was two plans
-- a result, 0.08 ms of PostgreSQL's time for each job drained, for a mark
-- that almost never moves (a result is written before its job is done).
-- Each trigger now joins its transition table to jobs itself, a plan made
-- once per session, and moves the marks only when a job named is done.

CREATE OR REPLACE FUNCTION history_mark_results() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    names text[];
BEGIN
    IF TG_OP <> 'DELETE' THEN
        names := ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                       JOIN jobs j ON j.id = n.job_id WHERE j.status = 'done');
    END IF;
    IF TG_OP <> 'INSERT' THEN
        names := coalesce(names, '{}') ||
                 ARRAY(SELECT DISTINCT j.target_name FROM old_rows o
                       JOIN jobs j ON j.id = o.job_id WHERE j.status = 'done');
    END IF;
    IF cardinality(names) > 0 THEN
        PERFORM history_mark_move(names);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION history_mark_metrics() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    names text[];
BEGIN
    IF TG_OP <> 'DELETE' THEN
        names := ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                       JOIN results r ON r.id = n.result_id
                       JOIN jobs j ON j.id = r.job_id WHERE j.status = 'done');
    END IF;
    IF TG_OP <> 'INSERT' THEN
        names := coalesce(names, '{}') ||
                 ARRAY(SELECT DISTINCT j.target_name FROM old_rows o
                       JOIN results r ON r.id = o.result_id
                       JOIN jobs j ON j.id = r.job_id WHERE j.status = 'done');
    END IF;
    IF cardinality(names) > 0 THEN
        PERFORM history_mark_move(names);
    END IF;
    RETURN NULL;
END $$;

DROP FUNCTION history_mark_done_jobs(bigint[]);
