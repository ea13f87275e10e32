-- 039_trigger_lookups_by_key.sql — the statement triggers that look rows up
-- by key keep plans that do so, however small the tables were when a
-- connection first ran them.
--
-- PL/pgSQL keeps the plan of each statement of a function for as long as
-- its connection lives, and makes it on the first call. The triggers of
-- results and metrics look up each new row's job by its key
-- (037_history_mark_lookups.sql), and hv_jobs_updated() the kept counts of
-- an ended job's plan by theirs; but on a new cluster, where tables are
-- nearly empty, reading such a table whole costs the planner less than its
-- index. A server's batch connection whose first results came then kept
-- that plan and read every result again on each batch it stored: in one of
-- four drains of 10,000 jobs on a fresh cluster, the metrics trigger took
-- 0.58 ms a statement (384 ms in all) against 0.09 (61 ms) in the others.
-- Without sequential scans to choose from, their plans read by key from
-- the start. What these functions call runs under the same setting.
ALTER FUNCTION history_mark_results() SET enable_seqscan = off;
ALTER FUNCTION history_mark_metrics() SET enable_seqscan = off;
ALTER FUNCTION hv_jobs_updated() SET enable_seqscan = off;
