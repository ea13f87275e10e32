-- 021_admin_labels.sql — labels an administrator gives a target, kept
-- apart from those its worker registers with (targets.labels, replaced at
-- each registration), so a worker's new registration never erases them.
-- A target's labels are both, the administrator's winning on a key both
-- set (PUT /api/v1/targets/{id}/labels; lib/selector.h matches them).
ALTER TABLE targets ADD COLUMN admin_labels jsonb NOT NULL DEFAULT '{}';
CREATE INDEX targets_all_labels_idx ON targets USING gin ((labels || admin_labels));
