-- 028_history_marks.sql — a mark per target that moves whenever anything a
-- history answer (GET /api/v1/targets/{id}/history) reads of the target
-- may have changed: a result or metric of one of its jobs written,
-- changed or deleted, a job of it becoming done or ceasing to be, its
-- change points found, changed or acknowledged, a series' range stored
-- again, a configuration of its jobs renamed. The server keeps rendered
-- answers with the mark read before rendering them and sends a kept answer
-- while the mark is the same, so a read of an unchanged history costs one
-- lookup of one row.
--
-- The mark is moved in the writer's transaction (row locked until it
-- commits): a reader sees the new mark only once it can see what moved it.
CREATE TABLE history_marks (
    target_name text PRIMARY KEY,
    mark        bigint NOT NULL
);

-- Moves the mark of each of the targets named (in name order, so writers
-- lock the rows in one order).
CREATE FUNCTION history_mark_move(names text[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO history_marks AS h (target_name, mark)
    SELECT DISTINCT x, 1 FROM unnest(names) AS x WHERE x IS NOT NULL ORDER BY 1
    ON CONFLICT (target_name) DO UPDATE SET mark = h.mark + 1
$$;

-- results and metrics: the targets of the jobs of the rows written.
CREATE FUNCTION history_mark_results() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'DELETE' THEN
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                                          JOIN jobs j ON j.id = n.job_id));
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM old_rows o
                                          JOIN jobs j ON j.id = o.job_id));
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION history_mark_metrics() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'DELETE' THEN
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                                          JOIN results r ON r.id = n.result_id
                                          JOIN jobs j ON j.id = r.job_id));
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM old_rows o
                                          JOIN results r ON r.id = o.result_id
                                          JOIN jobs j ON j.id = r.job_id));
    END IF;
    RETURN NULL;
END $$;

-- jobs: a done job updated (whatever changed), a job becoming done, a done job
-- deleted (the old and the new target, should it move).
CREATE FUNCTION history_mark_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        PERFORM history_mark_move(ARRAY(
            SELECT o.target_name FROM old_rows o JOIN new_rows n ON n.id = o.id
             WHERE o.status = 'done' OR n.status = 'done'
            UNION
            SELECT n.target_name FROM old_rows o JOIN new_rows n ON n.id = o.id
             WHERE o.status = 'done' OR n.status = 'done'));
    ELSE
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT o.target_name FROM old_rows o
                                         WHERE o.status = 'done'));
    END IF;
    RETURN NULL;
END $$;

-- configurations renamed or renumbered: the targets of their jobs.
CREATE FUNCTION history_mark_configurations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                                      JOIN old_rows o ON o.id = n.id
                                      JOIN jobs j ON j.config_id = n.id
                                     WHERE o.name IS DISTINCT FROM n.name
                                        OR o.idx IS DISTINCT FROM n.idx));
    RETURN NULL;
END $$;

-- change points and the series they belong to (its state and range, which
-- only change when its change points are found again).
CREATE FUNCTION history_mark_series() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    sid bigint;
BEGIN
    IF TG_TABLE_NAME = 'history_series' THEN
        sid := NEW.id;
    ELSIF TG_OP = 'DELETE' THEN
        sid := OLD.series_id;
    ELSE
        sid := NEW.series_id;
    END IF;
    PERFORM history_mark_move(ARRAY(SELECT t.name FROM history_series s
                                      JOIN targets t ON t.id = s.target_id WHERE s.id = sid));
    RETURN NULL;
END $$;

CREATE TRIGGER history_mark_results_ins AFTER INSERT ON results
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_mark_results();
CREATE TRIGGER history_mark_results_upd AFTER UPDATE ON results
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION history_mark_results();
CREATE TRIGGER history_mark_results_del AFTER DELETE ON results
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_mark_results();

CREATE TRIGGER history_mark_metrics_ins AFTER INSERT ON metrics
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION history_mark_metrics();
CREATE TRIGGER history_mark_metrics_upd AFTER UPDATE ON metrics
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION history_mark_metrics();
CREATE TRIGGER history_mark_metrics_del AFTER DELETE ON metrics
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_mark_metrics();

CREATE TRIGGER history_mark_jobs_upd AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION history_mark_jobs();
CREATE TRIGGER history_mark_jobs_del AFTER DELETE ON jobs
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION history_mark_jobs();

CREATE TRIGGER history_mark_configurations_upd AFTER UPDATE ON configurations
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION history_mark_configurations();

CREATE TRIGGER history_mark_change_points AFTER INSERT OR UPDATE OR DELETE ON change_points
    FOR EACH ROW EXECUTE FUNCTION history_mark_series();
CREATE TRIGGER history_mark_history_series AFTER UPDATE ON history_series
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state
                       OR OLD.first_at IS DISTINCT FROM NEW.first_at
                       OR OLD.last_at IS DISTINCT FROM NEW.last_at
                       OR OLD.n IS DISTINCT FROM NEW.n)
    EXECUTE FUNCTION history_mark_series();
