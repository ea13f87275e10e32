#!/usr/bin/env bash
# What a report keeps (report_digests: the digest and the answer, server/
# report.h) is keyed by what made it: the key holds the SHA-256 of the
# server's executable and the database's migration level besides the
# state of the plan's jobs. A server at another migration level, or of
# another build, reads neither the digest nor the answer kept (an answer
# altered in the table is not sent): it computes them again and keeps
# them under its own key. And every table a report reads is one that
# server/report_digest.c lists in hv_report_tables, with what covers a
# change of its rows: PostgreSQL's auto_explain logs the plan of every
# statement the server's connections run, nested ones (functions,
# triggers) included, and the tables those plans of the report's
# connections scan, for each kind of report (the answer kept and
# rendered, runs=all, Markdown, a small plan, a running plan), are all
# listed there.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/report_plans.sh
source "$(dirname "$0")/report_plans.sh"
hv_setup

# restart_with BINARY: the server again, run from BINARY.
restart_with() {
    hv_stop_pid "$HV_SERVER_PID" 10
    SERVER=$1
    hv_start_server
}

P=$(seed keyed 120)
LEVEL=$(sql "SELECT max(version) FROM hv_schema_migrations")
EXE=$(sha256sum "$SERVER" | cut -d' ' -f1)
assert_status 200 GET "/api/v1/plans/$P/report"
FIRST=$BODY
assert_eq "a digest is kept" 1 "$(sql "SELECT count(*) FROM report_digests WHERE plan_id = $P")"
assert_eq "its key is the build, the migration level and the state of the jobs" \
    "exe:$EXE:m$LEVEL:480:480:" \
    "$(sql "SELECT substring(version FROM '^([^:]*:[^:]*:[^:]*:[^:]*:[^:]*:)') FROM report_digests WHERE plan_id = $P")"
AT=$(sql "SELECT computed_at FROM report_digests WHERE plan_id = $P")
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the same server sends the answer kept" "$FIRST" "$BODY"
assert_eq "and computes no digest again" "$AT" \
    "$(sql "SELECT computed_at FROM report_digests WHERE plan_id = $P")"

# tamper: the answer kept made to name the plan "tampered"; a server that
# read it would send that. AT: when its digest was computed.
tamper() {
    sql "UPDATE report_digests SET answer = replace(answer, '\"name\":\"keyed\"',
         '\"name\":\"tampered\"') WHERE plan_id = $P" >/dev/null
    AT=$(sql "SELECT computed_at FROM report_digests WHERE plan_id = $P")
}

# rekeyed WHAT SHA LEVEL: the server just started (WHAT: how it differs)
# sends the first report again, not the answer altered, and keeps it, its
# digest computed again, under the key of build SHA and level LEVEL.
rekeyed() {
    assert_status 200 GET "/api/v1/plans/$P/report"
    assert_eq "$1, the answer kept is not read: it is rendered again" "$FIRST" "$BODY"
    assert_eq "and kept under the key of $1, its digest computed again" "exe:$2:m$3 true" \
        "$(sql "SELECT substring(version FROM '^([^:]*:[^:]*:[^:]*)') || ' ' || (computed_at > '$AT')
                FROM report_digests WHERE plan_id = $P")"
}

tamper
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "(the altered answer is sent by the server that kept it)" tampered "$(json .name)"

# Another migration level: the server started after one more migration
# is recorded.
sql "INSERT INTO hv_schema_migrations (version, name) VALUES ($((LEVEL + 1)), 'level_up.sql')" >/dev/null
restart_with "$SERVER"
rekeyed "one migration more" "$EXE" $((LEVEL + 1))

# Another build: the same program with one byte more has another SHA-256.
mkdir -p "$HV_TMP/other"
cp -- "$SERVER" "$HV_TMP/other/hvbench-server"
printf '\n' >>"$HV_TMP/other/hvbench-server"
tamper
BUILT=$SERVER
restart_with "$HV_TMP/other/hvbench-server"
rekeyed "another build" "$(sha256sum "$HV_TMP/other/hvbench-server" | cut -d' ' -f1)" $((LEVEL + 1))
restart_with "$BUILT"

# The tables a report reads. auto_explain logs the plan of every statement
# of the connections opened after it is set up (the server restarted),
# each message of the log led by the backend's pid and application name
# (psql's for this script's, none, "[unknown]", for the server's).
sql "ALTER SYSTEM SET log_line_prefix = '%p:%a '" >/dev/null
sql "ALTER DATABASE hvbench SET session_preload_libraries = 'auto_explain'" >/dev/null
for s in "log_min_duration = 0" "log_nested_statements = on" "log_format = json"; do
    sql "ALTER DATABASE hvbench SET auto_explain.$s" >/dev/null
done
sql "SELECT pg_reload_conf()" >/dev/null
restart_with "$BUILT"
LOG=$HV_TMP/pg/log/postgres.log
FROM=$(($(stat -c %s "$LOG") + 1))

S=$(seed small 20)
sql "DELETE FROM report_digests" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_status 200 GET "/api/v1/plans/$P/report?runs=all"
assert_status 200 GET "/api/v1/plans/$P/report?format=md"
assert_status 200 GET "/api/v1/plans/$S/report"
reopen "$P"
assert_status 200 GET "/api/v1/plans/$P/report"
sql "UPDATE report_digests SET computed_at = now() - interval '1 hour' WHERE plan_id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "(the plan running, its digest aged, the report is computed again)" running \
    "$(json .status)"

# Each plan the server's backends logged, under the pid of its backend:
# the tables it scans.
tail -c "+$FROM" "$LOG" | awk '
    /^[0-9]+:[^ ]* / { pid = $1 ~ /^[0-9]+:(\[unknown\])?$/ ? $1 : "" }
    pid != "" && match($0, /"Relation Name": "[^"]+"/) {
        print pid, substr($0, RSTART + 18, RLENGTH - 19)
    }' | sort -u >"$HV_TMP/scans"
# The report's connections: the server's that read report_digests, the
# table of what reports keep; its other threads (drain hooks, webhooks)
# never do, and no other request was made meanwhile.
mapfile -t PIDS < <(awk '$2 == "report_digests" { print $1 }' "$HV_TMP/scans")
assert_eq "the reports' statements are in the log" yes "$([[ ${#PIDS[@]} -gt 0 ]] && echo yes)"
READ=$(awk -v pids=" ${PIDS[*]} " 'index(pids, " " $1 " ") { print $2 }' "$HV_TMP/scans" | sort -u)
LISTED=$(sed -n '/^const struct hv_report_table hv_report_tables\[\] = {$/,/^};$/p' \
    "$HV_ROOT/server/report_digest.c" | sed -n 's/^ *{"\([a-z_0-9]*\)",.*/\1/p' | sort -u)
hv_log "tables read: $(echo "$READ" | tr '\n' ' ')"
assert_eq "every table a report reads is listed in hv_report_tables" "" \
    "$(comm -23 <(echo "$READ") <(echo "$LISTED") | tr '\n' ' ')"
assert_eq "and every table listed there is read" "" \
    "$(comm -13 <(echo "$READ") <(echo "$LISTED") | tr '\n' ' ')"

hv_finish
