-- 044_plan_import_digest.sql — importing the same exported document twice
-- gives the same plan (POST /api/v1/plans/import).
--
-- An imported plan keeps the digest of the document it was made from:
-- the server's SHA-256 (hex) of the document without "exported_at", its
-- keys sorted and written compactly, so exporting the same plan again, or
-- sending the same file with another client, names the same document.
-- hv_plan_import_once() stores nothing for a digest it already holds and
-- answers that plan, with created false. Plans made here (submitted,
-- imported tool outputs) have no digest. Deleting or purging an imported
-- plan lets its document be imported again.

ALTER TABLE plans ADD COLUMN import_digest text;
CREATE UNIQUE INDEX plans_import_digest ON plans (import_digest)
    WHERE import_digest IS NOT NULL;

-- hv_plan_import() (014_plan_export.sql) once per digest. Two imports of
-- one document at the same time take turns on the digest's lock: the
-- second finds the plan the first committed.
CREATE FUNCTION hv_plan_import_once(doc jsonb, token bigint, digest text,
                                    OUT pid bigint, OUT created boolean)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('hv_plan_import:' || digest, 0));
    SELECT p.id INTO pid FROM plans p WHERE p.import_digest = digest;
    created := pid IS NULL;
    IF created THEN
        pid := hv_plan_import(doc, token);
        UPDATE plans SET import_digest = digest WHERE id = pid;
    END IF;
END $$;
