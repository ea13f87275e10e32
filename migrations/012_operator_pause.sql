-- 012_operator_pause.sql — an apply step may wait for the operator.
--
-- A reboot-class level (kvm_ept, kvm_npt) changes only when the operator
-- reloads the KVM module. An apply step whose host is not at such a level
-- changes nothing and waits in 'waiting_for_operator' (its jobs stay
-- queued, plans.waiting says what to run); lease_until then holds when
-- the step is offered to the host worker again, which reads the module
-- parameter again (server/db_steps.c).
ALTER TABLE plan_steps DROP CONSTRAINT plan_steps_status_check;
ALTER TABLE plan_steps ADD CONSTRAINT plan_steps_status_check
    CHECK (status IN ('waiting', 'queued', 'running', 'done', 'failed', 'cancelled',
                      'waiting_for_operator'));
CREATE INDEX plan_steps_operator_idx ON plan_steps (lease_until)
    WHERE status = 'waiting_for_operator';
