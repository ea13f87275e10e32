-- 051_boot_id.sql — a worker's registration names the boot of its machine.
--
-- A host worker that restarts a guest waits for the guest's worker to
-- register again. It told the registrations apart by their ids only, so a
-- registration the guest's previous boot sent late (it was still booting
-- when the restart began) counted as the new boot's, and that boot's
-- credential, from a guest destroyed since, stayed live and could claim.
--
-- Now a worker sends its machine's boot id (Linux:
-- /proc/sys/kernel/random/boot_id) at registration, kept here. A guest's
-- registration from another boot than the live holder of its target (the
-- same DMI product UUID) ends that holder at once, whatever its silence
-- or running attempt: the machine it ran on booted again. A guest's
-- credential that re-registers from another boot ends too (its worker
-- registers anew with its worker token). Workers that send no boot id
-- keep the old rules (server/db_workers.c).
ALTER TABLE workers ADD COLUMN boot_id text
    CHECK (boot_id IS NULL OR boot_id ~ '^[0-9a-z-]{1,64}$');
