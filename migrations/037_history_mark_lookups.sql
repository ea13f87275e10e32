-- 037_history_mark_lookups.sql — the history marks of results and metrics
-- look up each row's job by its key, whatever the size of the statement.
--
-- Since a server stores the results of many jobs in one statement
-- (server/batch.c), the triggers of 035 see a dozen rows at a time, and
-- the plan PostgreSQL kept for their joins of the transition table to
-- results and jobs grew with those tables: in three drains of 10,000 jobs
-- in a row, the metrics trigger's question took 0.36, 0.83 and 1.69 ms a
-- statement. Each row's job is now looked up by its primary key
-- (LATERAL), once for each distinct result or job.

CREATE OR REPLACE FUNCTION history_mark_results() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    names text[];
BEGIN
    IF TG_OP <> 'DELETE' THEN
        names := ARRAY(SELECT DISTINCT d.target_name
                       FROM (SELECT DISTINCT job_id FROM new_rows) n,
                            LATERAL (SELECT j.target_name FROM jobs j
                                     WHERE j.id = n.job_id AND j.status = 'done') d);
    END IF;
    IF TG_OP <> 'INSERT' THEN
        names := coalesce(names, '{}') ||
                 ARRAY(SELECT DISTINCT d.target_name
                       FROM (SELECT DISTINCT job_id FROM old_rows) o,
                            LATERAL (SELECT j.target_name FROM jobs j
                                     WHERE j.id = o.job_id AND j.status = 'done') d);
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
        names := ARRAY(SELECT DISTINCT d.target_name
                       FROM (SELECT DISTINCT result_id FROM new_rows) n,
                            LATERAL (SELECT j.target_name FROM results r JOIN jobs j ON j.id = r.job_id
                                     WHERE r.id = n.result_id AND j.status = 'done') d);
    END IF;
    IF TG_OP <> 'INSERT' THEN
        names := coalesce(names, '{}') ||
                 ARRAY(SELECT DISTINCT d.target_name
                       FROM (SELECT DISTINCT result_id FROM old_rows) o,
                            LATERAL (SELECT j.target_name FROM results r JOIN jobs j ON j.id = r.job_id
                                     WHERE r.id = o.result_id AND j.status = 'done') d);
    END IF;
    IF cardinality(names) > 0 THEN
        PERFORM history_mark_move(names);
    END IF;
    RETURN NULL;
END $$;
