-- 029_guest_hosts.sql — a guest belongs to its host.
--
-- Domain names such as vm0 repeat on every host of a fleet, so a guest
-- whose host is known (its worker said it, or its DMI product UUID is a
-- domain UUID a host worker listed) is told apart by (host, name): its
-- target's name is "HOST/GUEST", unique server-wide like every target
-- name, and what jobs, steps and history name it by. short_name is the
-- name its worker registered under (the guest's name on its host); for
-- hosts and for guests of no known host it is the name itself, as before.

-- The libvirt domain a target name stands for on its host: "vm0" for
-- "h1/vm0" and for "vm0" (neither host nor domain names hold a "/").
CREATE FUNCTION hv_domain_name(n text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT regexp_replace(n, '^.*/', '');
$$;

ALTER TABLE targets
    ADD COLUMN host_id bigint REFERENCES targets (id),
    ADD COLUMN short_name text GENERATED ALWAYS AS (hv_domain_name(name)) STORED;
ALTER TABLE targets ADD CONSTRAINT targets_host_guest
    CHECK (host_id IS NULL OR (kind = 'guest' AND position('/' IN name) > 0));
-- Guest names are unique per host; host names (and those of guests of no
-- known host) server-wide, as targets.name always was.
CREATE UNIQUE INDEX targets_host_short_idx ON targets (host_id, short_name) WHERE host_id IS NOT NULL;

-- The target a plan on host h means by guest name g: that host's own
-- guest g when one registered, else a guest of no known host called g
-- (as before hosts were known); else, in a plan of its own (not a fleet's
-- child: fleet unset), the one guest g of another host when only one host
-- has one (a plan may name a guest its host does not list); else —
-- nothing registered yet — h's guest g in a fleet's child (a fleet's
-- hosts all have a g), g otherwise.
CREATE FUNCTION hv_guest_ref(h text, g text, fleet boolean) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN h IS NULL OR position('/' IN g) > 0 THEN g
        WHEN EXISTS (SELECT 1 FROM targets t WHERE t.name = h || '/' || g) THEN h || '/' || g
        WHEN EXISTS (SELECT 1 FROM targets t WHERE t.name = g) THEN g
        WHEN NOT fleet AND (SELECT count(*) FROM targets t WHERE t.short_name = g
                            AND t.host_id IS NOT NULL) = 1
            THEN (SELECT t.name FROM targets t WHERE t.short_name = g AND t.host_id IS NOT NULL)
        WHEN fleet THEN h || '/' || g
        ELSE g
    END;
$$;
