-- The rounds of a plan: the result that ends a job asks whether its round is
-- the plan's latest (max(repetition)) and whether the round still has open
-- jobs; with a plan's jobs by repetition both are index lookups, not a walk
-- over every job of the plan on each result.
CREATE INDEX jobs_plan_round_idx ON jobs (plan_id, repetition);
