-- 049_restored_how.sql — a change's restore is recorded when and how it
-- happened.
--
-- Before, only a plan's restore step marked its changes restored, all at
-- the step's end (restored_at = now()), also those the host worker had
-- already put back from its journal at its start or for
-- `hvbench-worker --restore`; a restore step that failed marked none,
-- even those it did put back.
--
-- Now:
--   * target_changes.restored_how says who put a change back: 'step' (the
--     plan's restore step, restored_by), 'worker_start' (the host worker
--     at its start, from its journal) or 'restore_command'
--     (`hvbench-worker --restore`). Changes marked before this migration
--     were marked by a restore step.
--   * hv_change_restored() is the one writer of restored_at, restored_by
--     and restored_how: the restore step's result (each change it reports,
--     then, when it succeeded, every change of the plan still open) and a
--     host worker's report of what it restored itself
--     (POST /api/v1/workers/restored) both call it.

ALTER TABLE target_changes
    ADD COLUMN restored_how text
        CHECK (restored_how IN ('step', 'worker_start', 'restore_command'));
UPDATE target_changes SET restored_how = 'step' WHERE restored_at IS NOT NULL;

-- Marks as restored, at p_at, the changes of plan p_plan on target
-- p_target not marked yet that a restore put back, and returns how many
-- it marked:
--   * p_factor given: those of that factor, scope and object recorded no
--     later than p_at (a few seconds' leeway for clocks): putting an
--     object back to what the plan found undoes every change the plan made
--     to it before, never one made after;
--   * p_factor NULL: every one of the plan still open (a restore step that
--     succeeded put back all the plan changed).
-- restored_at is p_at as the restorer saw it, but never before the
-- change itself and never in the future beyond the leeway (the server's
-- time then). restored_by is p_step for how 'step', else NULL.
CREATE FUNCTION hv_change_restored(p_target text, p_plan bigint, p_factor text, p_scope text,
                                   p_object text, p_at timestamptz, p_how text, p_step bigint)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    leeway constant interval := interval '5 seconds';
    at timestamptz := CASE WHEN p_at IS NULL OR p_at > now() + leeway THEN now() ELSE p_at END;
    n integer;
BEGIN
    UPDATE target_changes c
       SET restored_at = greatest(c.changed_at, at),
           restored_by = CASE WHEN p_how = 'step' THEN p_step END,
           restored_how = p_how
     WHERE c.target_name = p_target AND c.plan_id = p_plan AND c.restored_at IS NULL
       AND (p_factor IS NULL
            OR (c.factor = p_factor AND c.scope = p_scope AND c.object = p_object
                AND c.changed_at <= at + leeway));
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;
