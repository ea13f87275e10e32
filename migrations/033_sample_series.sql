-- Each result's sample series: per metric its count and first and last
-- time, kept as samples are written and deleted. The samples endpoint
-- buckets a series between its first and last time; with these kept it
-- reads a result's samples once, not once for the bounds and again for
-- the buckets.
CREATE TABLE sample_series (
    result_id bigint NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    metric    text NOT NULL,
    n         bigint NOT NULL,
    t_first   double precision NOT NULL,
    t_last    double precision NOT NULL,
    PRIMARY KEY (result_id, metric)
);

INSERT INTO sample_series (result_id, metric, n, t_first, t_last)
SELECT result_id, metric, count(*), min(t), max(t) FROM samples GROUP BY result_id, metric;

-- Statement triggers with transition tables: one upsert per COPY or INSERT
-- of a result's samples, whatever wrote them (upload, import, SQL).
CREATE FUNCTION sample_series_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sample_series AS k (result_id, metric, n, t_first, t_last)
    SELECT result_id, metric, count(*), min(t), max(t) FROM added GROUP BY result_id, metric
    ON CONFLICT (result_id, metric) DO UPDATE SET n = k.n + excluded.n,
        t_first = least(k.t_first, excluded.t_first), t_last = greatest(k.t_last, excluded.t_last);
    RETURN NULL;
END $$;

-- A deletion (retention's purge) counts again what remains of the series
-- it touched: usually nothing, so their rows go.
CREATE FUNCTION sample_series_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM sample_series k USING (SELECT DISTINCT result_id, metric FROM removed) t
    WHERE k.result_id = t.result_id AND k.metric = t.metric;
    INSERT INTO sample_series (result_id, metric, n, t_first, t_last)
    SELECT s.result_id, s.metric, count(*), min(s.t), max(s.t)
    FROM samples s JOIN (SELECT DISTINCT result_id, metric FROM removed) t
         ON s.result_id = t.result_id AND s.metric = t.metric
    GROUP BY s.result_id, s.metric;
    RETURN NULL;
END $$;

CREATE TRIGGER samples_series_added AFTER INSERT ON samples
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION sample_series_added();
CREATE TRIGGER samples_series_removed AFTER DELETE ON samples
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION sample_series_removed();
