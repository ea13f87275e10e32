-- 015_report_digests.sql — what the report of a big plan keeps between
-- reads (server/report.h).
--
-- A plan's report is computed from one value per round of every series. A
-- plan of a series longer than the report lists in full (100 rounds) has
-- its figures computed from the values once, and what later reports need
-- kept here: the summaries as answered (runs listed: the flagged ones) and
-- per configuration, workload, metric and side the figures the comparisons
-- read (n, the summary, the mean and variance of the logarithms, the jobs
-- kept as evidence), with the plan's workload variants and targets as the
-- report reads them from its jobs. version is the state of the plan's jobs
-- the values were read after (how many, how many done, when one last
-- changed status, as the plan's summary gives them): a job of the plan
-- becoming done changes it, however its result arrived (an upload, an
-- import, rows written by SQL), and the next report computes the digest
-- again. Nothing is written on the upload path.
CREATE TABLE report_digests (
    plan_id     bigint PRIMARY KEY REFERENCES plans ON DELETE CASCADE,
    version     text NOT NULL,
    digest      text NOT NULL,
    workloads   json NOT NULL,
    targets     json NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT now()
);
