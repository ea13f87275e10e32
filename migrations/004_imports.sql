-- 004_imports.sql — saved outputs of fio, iperf3, iperf 2, bonnie++,
-- sysbench and stress-ng imported as history (POST /api/v1/imports).
--
-- An import is stored as an ordinary plan (one configuration "default",
-- one job per run in the output, status done, each with its result, its
-- metrics and the output as raw), so reports and history need nothing of
-- their own. This table says which plans are imports, and keeps one output
-- from being imported twice for the same target and tool: operators load
-- years of files with scripts, and run them again after a failure.
CREATE TABLE imports (
    id            bigserial PRIMARY KEY,
    plan_id       bigint NOT NULL UNIQUE REFERENCES plans ON DELETE CASCADE,
    tool          text NOT NULL,
    target_name   text NOT NULL,
    output_sha256 text NOT NULL,
    token_id      bigint REFERENCES tokens,
    imported_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (target_name, tool, output_sha256)
);
