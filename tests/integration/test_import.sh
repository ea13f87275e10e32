#!/usr/bin/env bash
# shellcheck disable=SC2016 # $m, $v ... in single quotes are jq's variables
# Importing saved tool outputs (POST /api/v1/imports, hvbench import): each
# tool's real output (tests/fixtures/<tool>/) becomes a finished plan whose
# report holds the values the file says, at the time --at or the file
# gives; labels and provenance are kept; a target nobody registered is
# created; bonnie++ -x 2 gives two repetitions, and so do two outputs saved
# into one file (each run at its own time); outputs of different workloads
# in one file are refused naming how many runs it holds; sysbench fileio
# is a disk workload; bonnie++ 1.0x tables and CSV import, and so do
# tables as posts quote them, one table of a post at a time; a damaged output
# exits 1 with the parser's reason and stores nothing, and so does an
# output imported twice; the API refuses bad requests, wrong roles and
# bodies over the cap. A study (outputs under labels) is refused with one
# label, a baseline that is no label, an output that does not parse, runs
# of one label that are not of one workload, or a tool measuring two kinds,
# storing nothing; two tools under two labels give a workload per tool and
# a configuration per label; the same study twice is 409.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HV_SERVER_ARGS=(--max-body 262144)
hv_setup

FX=$HV_ROOT/tests/fixtures
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
export HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN

# import ARGS...: runs hvbench --json import, sets RC, OUT (stdout: the
# server's answer) and ERR (stderr).
import() { hv_cli --json import "$@"; }

# --- one import per tool, through the CLI ------------------------------------------
# tool | file | target | metric | value from the file | report rows
cases=(
    "fio|fio/seq-write.json|imp-disk|disk.seq_write.mbps|390.167813|6"
    "fio|fio/jobfile-seqread-randrw.json|imp-disk|disk.randrw_write.iops|4004.997501|18"
    "iperf3|iperf3/client-tcp-P4.json|imp-net|net.tcp.gbps|5.582678696122478|7"
    "iperf|iperf/client-P2.csv|imp-net|net.tcp.gbps|6.972455628|1"
    "iperf|iperf/client-P2.txt|imp-net|net.tcp.gbps|13|1"
    "bonnie|bonnie/f-s4096-r2048.csv|imp-disk|disk.seq_write.mbps|334.700544|8"
    "bonnie|bonnie/f-s4096-r2048.txt|imp-disk|disk.seeks.iops|4543|8"
    "sysbench|sysbench/cpu-t2.txt|imp-cpu|cpu.sysbench.events_per_s|3362.67|5"
    "sysbench|sysbench/memory.txt|imp-cpu|mem.sysbench.mbps|4715.79230208|6"
    "stress-ng|stress-ng/matrix2-cache1-t2.yaml|imp-cpu|cpu.stressng.cache.bogo_ops_per_s|143368.015585|4"
    "stress-ng|stress-ng/cpu1-t2.log|imp-cpu|cpu.stressng.cpu.bogo_ops_per_cpu_s|1645.55|2"
)
for c in "${cases[@]}"; do
    IFS='|' read -r tool file target metric value rows <<<"$c"
    import --tool "$tool" --target "$target" --label study=kvm-2010 "$FX/$file"
    assert_eq "import $file: exit 0" 0 "$RC"
    plan=$(jq -r .plan_id <<<"$OUT")
    assert_match "import $file: a plan id" '^[1-9][0-9]*$' "$plan"
    assert_eq "import $file: the answer has $metric" "$value" \
        "$(jq -r --arg m "$metric" --argjson v "$value" \
            '.metrics[] | select(.name == $m) | if ((.value - $v) | fabs) <= 1e-9 * $v then $v else .value end' <<<"$OUT")"
    api GET "/api/v1/plans/$plan/report"
    assert_eq "plan $plan ($file) is done" "done" "$(json .status)"
    assert_eq "plan $plan: $rows report rows, all of workload $tool on $target, n = 1" \
        "$rows $tool $target 1 default" \
        "$(json '"\(.rows | length) \([.rows[].workload] | unique | join(",")) \([.rows[].target] | unique | join(",")) \([.rows[].n] | unique | join(",")) \([.rows[].configuration] | unique | join(","))"')"
    assert_near "plan $plan ($file): report mean of $metric" "$value" \
        "$(json --arg m "$metric" '.rows[] | select(.metric == $m) | .mean')"
done
assert_eq "every import stored one plan, one job, one result" "11 11 11 11" \
    "$(sql "SELECT (SELECT count(*) FROM plans) || ' ' || (SELECT count(*) FROM jobs WHERE status = 'done') || ' ' || (SELECT count(*) FROM results) || ' ' || (SELECT count(*) FROM imports)")"

# --- per-second samples come along ------------------------------------------------
# iperf3 -J --omit 1 -t 5: five measured one-second intervals after the
# omitted one; the stored samples are their sums, in Gbit/s.
SF=$FX/iperf3/client-tcp-P2-omit1.json
import --tool iperf3 --target imp-net "$SF"
assert_eq "import with intervals: exit 0" 0 "$RC"
J=$(jq -r .job_id <<<"$OUT")
api GET "/api/v1/jobs/$J/results"
assert_eq "the measured intervals are stored as samples" \
    "$(jq -c '[.intervals[] | select(.sum.omitted | not) | .sum.bits_per_second / 1e9 | . * 1e6 | round]' "$SF")" \
    "$(json -c '[.items[0].samples[] | select(.metric == "net.tcp.gbps") | .value * 1e6 | round]')"
assert_eq "timed from the end of the omitted second" "1 2 3 4 5" \
    "$(json '[.items[0].samples[] | select(.metric == "net.tcp.gbps") | .t | round] | map(tostring) | join(" ")')"

# --- what the CLI prints without --json ---------------------------------------------
out=$("$CLI" import --tool iperf3 --target imp-net "$FX/iperf3/client-udp.json" 2>&1)
assert_eq "import (table): exit 0" 0 "$?"
assert_match "import prints the plan" 'imported iperf3 output for imp-net as plan [0-9]+: 1 run, started 2026-11-29' "$out"
assert_match "import prints each metric with its unit" 'net\.udp\.loss_pct ↓ +1\.18 +%' "$out"
assert_match "import prints the plan's page" "$URL/#/plans/[0-9]+" "$out"

# --- the plan: name, spec, labels, provenance, times ---------------------------------
import --tool fio --target imp-at --at 2010-03-01T10:00:00Z --label study=kvm-2010 \
    --label host=old-hv "$FX/fio/randread-qd8.json"
assert_eq "import with --at: exit 0" 0 "$RC"
P=$(jq -r .plan_id <<<"$OUT")
J=$(jq -r .job_id <<<"$OUT")
assert_eq "a new target is said to be created" true "$(jq -r .target_created <<<"$OUT")"
assert_eq "the run starts at --at and lasts fio's runtime" \
    "2010-03-01T10:00:00.000Z 2010-03-01T10:00:03.002Z" \
    "$(jq -r '.runs[0] | "\(.started_at) \(.finished_at)"' <<<"$OUT")"
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "the plan is named after the tool and the day" "import: fio 2010-03-01" "$(json .name)"
assert_eq "labels are kept on the plan" "kvm-2010 old-hv" "$(json '"\(.plan.labels.study) \(.plan.labels.host)"')"
assert_eq "the plan says where it came from" "fio json fio-3.33 request 1" \
    "$(json '.plan.import | "\(.tool) \(.format) \(.tool_version) \(.at_source) \(.runs)"')"
assert_eq "one workload fio/disk on the target" "fio disk fio imp-at" \
    "$(json '"\(.plan.workloads[0].id) \(.plan.workloads[0].kind) \(.plan.workloads[0].engine) \(.plan.targets.host)"')"
assert_eq "one done job" "1 1" "$(json '"\(.jobs.total) \(.jobs.done)"')"
assert_status 200 GET "/api/v1/jobs/$J/results"
assert_match "the result starts at --at" '^2010-03-01T10:00:00' "$(json '.items[0].started_at')"
assert_match "the result ends 3.002 s later" '^2010-03-01T10:00:03\.002' "$(json '.items[0].finished_at')"
assert_eq "the result observed what fio said" "fio-3.33 randread" \
    "$(json '.items[0].observed | "\(.tool_version) \(.jobs[0].rw)"')"
assert_eq "the output is kept as raw" "$(wc -c <"$FX/fio/randread-qd8.json")" \
    "$(sql "SELECT octet_length(raw) FROM results WHERE job_id = $J")"
assert_status 200 GET "/api/v1/plans?name=import:%20fio%202010-03-01"
assert_eq "the import is listed by name" "$P" "$(json '.items[0].id')"

# Without --at the time comes from the output (fio stamps its report).
assert_eq "without --at, the output's time" "2026-11-29T19:38:50.109Z output" \
    "$(sql "SELECT to_char(r.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || ' ' || (p.spec->'import'->>'at_source') FROM plans p JOIN jobs j ON j.plan_id = p.id JOIN results r ON r.job_id = j.id WHERE p.spec->'import'->>'output_sha256' = '$(sha256sum "$FX/fio/seq-write.json" | cut -c1-64)'")"
# ... and from the time of the import when the output has none.
assert_eq "sysbench has no time: the import's" "import" \
    "$(sql "SELECT spec->'import'->>'at_source' FROM plans WHERE spec->'import'->>'tool' = 'sysbench' LIMIT 1")"

# The target nobody registered: a host without facts, listed like others.
assert_status 200 GET /api/v1/targets
assert_eq "imported targets are hosts without fingerprint" "host null host null" \
    "$(json '[.items[] | select(.name == "imp-at" or .name == "imp-cpu")] | map("\(.kind) \(.fingerprint)") | join(" ")')"
assert_eq "the target has empty facts" "{}" "$(sql "SELECT facts FROM targets WHERE name = 'imp-at'")"
# A worker registering that name later keeps its id and brings facts.
TID=$(sql "SELECT id FROM targets WHERE name = 'imp-at'")
assert_status 200 POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" \
    --data-binary '{"name":"imp-at","kind":"host","facts":{"cpus":2},"fingerprint":"00112233"}'
assert_eq "registering keeps the imported target's id" "$TID" "$(json .target_id)"

# --- several runs: bonnie++ -x 2 -------------------------------------------------
import --tool bonnie++ --target imp-x2 "$FX/bonnie/x2-D-f-s1024-r512.csv"
assert_eq "bonnie++ -x 2: exit 0" 0 "$RC"
P=$(jq -r .plan_id <<<"$OUT")
assert_eq "two runs, two jobs" "2 bonnie" "$(jq -r '"\(.runs | length) \(.tool)"' <<<"$OUT")"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the report has n = 2" 2 "$(json '.rows[] | select(.metric == "disk.seq_write.mbps") | .n')"
assert_near "the mean of the two block writes" "$(jq -n '(30884 + 29591) * 1024 / 1e6 / 2')" \
    "$(json '.rows[] | select(.metric == "disk.seq_write.mbps") | .mean')"
assert_match "two runs have an interval" '^[0-9.]+$' \
    "$(json '.rows[] | select(.metric == "disk.seeks.iops") | .ci95_half_pct')"
assert_eq "their repetitions are 1 and 2" "1,2" "$(sql "SELECT string_agg(repetition::text, ',' ORDER BY repetition) FROM jobs WHERE plan_id = $P")"

# --- several outputs in one file: one repetition each -------------------------------
# tool | file | metric | mean of the runs' values | first run's start | second run's start
multi=(
    "fio|fio/x2-randread-qd4.json|disk.rand_read.mbps|$(jq -n '(176.619274 + 148.847944) / 2')|2026-12-01T16:08:47.949Z|2026-12-01T16:08:50.268Z"
    "iperf3|iperf3/x2-client-tcp-P2.json|net.tcp.stream_gbps_max|$(jq -n '(4.308115824824275 + 5.705676369670505) / 2')|2026-12-01T16:12:35.000Z|2026-12-01T16:12:38.000Z"
    "stress-ng|stress-ng/x2-cpu1-t2.yaml|cpu.stressng.cpu.bogo_ops_per_s|$(jq -n '(860.807492 + 688.194978) / 2')|2026-12-01T16:12:48.000Z|2026-12-01T16:12:50.000Z"
    "bonnie|bonnie/x2-normal-f-s1024-r512-n1.txt|disk.seq_write.mbps|$(jq -n '(160627 + 154721) * 1024 / 1e6 / 2')||"
)
for c in "${multi[@]}"; do
    IFS='|' read -r tool file metric mean t0 t1 <<<"$c"
    import --tool "$tool" --target imp-multi "$FX/$file"
    assert_eq "import $file: exit 0" 0 "$RC"
    P=$(jq -r .plan_id <<<"$OUT")
    assert_eq "$file: two runs in the answer" 2 "$(jq '.runs | length' <<<"$OUT")"
    assert_eq "$file: repetitions 1 and 2 of one job each" "1,2" \
        "$(sql "SELECT string_agg(repetition::text, ',' ORDER BY repetition) FROM jobs WHERE plan_id = $P AND status = 'done'")"
    api GET "/api/v1/plans/$P/report"
    assert_eq "$file: the report has n = 2" 2 "$(json --arg m "$metric" '.rows[] | select(.metric == $m) | .n')"
    assert_near "$file: the report's mean of $metric is the runs' mean" "$mean" \
        "$(json --arg m "$metric" '.rows[] | select(.metric == $m) | .mean')"
    if [[ -n $t0 ]]; then
        assert_eq "$file: each run starts when its output says" "$t0 $t1" \
            "$(jq -r '"\(.runs[0].started_at) \(.runs[1].started_at)"' <<<"$OUT")"
    fi
done
# sysbench stamps no time: with --at the second run starts where the first
# ended (its total time, 2.0041 s).
import --tool sysbench --target imp-multi --at 2011-05-02T08:00:00Z "$FX/sysbench/x2-cpu-t2.txt"
assert_eq "sysbench, two reports: exit 0" 0 "$RC"
assert_eq "the second run starts after the first" \
    "2011-05-02T08:00:00.000Z 2011-05-02T08:00:02.004Z 2011-05-02T08:00:02.004Z" \
    "$(jq -r '"\(.runs[0].started_at) \(.runs[0].finished_at) \(.runs[1].started_at)"' <<<"$OUT")"
assert_eq "both runs' events per second are stored" "1787.13 2127.53" \
    "$(jq -r '[.runs[].metrics[] | select(.name == "cpu.sysbench.events_per_s") | .value] | map(tostring) | join(" ")' <<<"$OUT")"

# Outputs of different workloads in one file: refused, naming the count;
# nothing stored.
before=$(sql "SELECT count(*) FROM plans")/$(sql "SELECT count(*) FROM results")
cat "$FX/fio/seq-write.json" "$FX/fio/randread-qd8.json" >"$HV_TMP/two-fio.json"
import --tool fio --target imp-multi "$HV_TMP/two-fio.json"
assert_eq "two different fio runs in one file: exit 1" 1 "$RC"
assert_match "it names the count and the difference" \
    'fio: the output holds 2 runs, and they are not runs of one workload: run 2 has rw "randread" where run 1 has "write"' "$ERR"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary \
    "$(jq -n --rawfile out "$HV_TMP/two-fio.json" '{tool: "fio", target: "imp-multi", output: $out}')"
assert_match "400 at /output" '^/output fio: the output holds 2 runs' "$(json '"\(.errors[0].path) \(.errors[0].message)"')"
import --tool bonnie --target imp-multi "$FX/bonnie/lkml-2003-11-04-1.03-wide.txt"
assert_eq "a table of two machines: exit 1" 1 "$RC"
assert_match "it names them" 'run 2 has name "LinuxThreads" where run 1 has "NPTL"' "$ERR"
assert_eq "refused files store nothing" "$before" \
    "$(sql "SELECT count(*) FROM plans")/$(sql "SELECT count(*) FROM results")"

# --- sysbench fileio, bonnie++ 1.0x ---------------------------------------------------
import --tool sysbench --target imp-fileio "$FX/sysbench/fileio-rndrw.txt"
assert_eq "sysbench fileio: exit 0" 0 "$RC"
P=$(jq -r .plan_id <<<"$OUT")
assert_near "fileio: read MB/s" "$(jq -n '51.43 * 1.048576')" \
    "$(jq -r '.metrics[] | select(.name == "disk.randrw_read.mbps") | .value' <<<"$OUT")"
assert_near "fileio: the latency's 95th percentile in us" 10 \
    "$(jq -r '.metrics[] | select(.name == "disk.randrw.lat_p95_us") | .value' <<<"$OUT")"
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "a fileio import is a disk workload" "disk sysbench" \
    "$(json '"\(.plan.workloads[0].kind) \(.plan.workloads[0].engine)"')"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "its report has the nine metrics" 9 "$(json '.rows | length')"
import --tool bonnie --target imp-old "$FX/bonnie/lkml-2004-03-19-1.03.txt"
assert_eq "bonnie++ 1.03 table and CSV: exit 0" 0 "$RC"
assert_near "1.03: the seeks from the CSV line" 339.8 \
    "$(jq -r '.metrics[] | select(.name == "disk.seeks.iops") | .value' <<<"$OUT")"
assert_eq "1.03: the version from the table" "1.03 csv" \
    "$(sql "SELECT (spec->'import'->>'tool_version') || ' ' || (spec->'import'->>'format') FROM plans WHERE id = $(jq -r .plan_id <<<"$OUT")")"

# --- bonnie++ tables as posts quote them ----------------------------------------------
# One pasted table, its last line without a newline: the size is unknown.
import --tool bonnie --target imp-post "$FX/bonnie/pasted-1.02b-s256-r128-n1-no-newline.txt"
assert_eq "a pasted 1.02b table without its final newline: exit 0" 0 "$RC"
assert_near "its seeks" 1526 "$(jq -r '.metrics[] | select(.name == "disk.seeks.iops") | .value' <<<"$OUT")"
assert_status 200 GET "/api/v1/jobs/$(jq -r .job_id <<<"$OUT")/results"
assert_eq "the result says the file size is unknown" "null true" \
    "$(json '.items[0].observed | "\(.file_size) \(.notes[0] | test("file size is unknown"))"')"
# A post of two: refused unless one is picked; each table imports once.
before=$(sql "SELECT count(*) FROM plans")
import --tool bonnie --target imp-post "$FX/bonnie/pasted-1.03e-two-tables.txt"
assert_eq "a post of two pasted tables: exit 1" 1 "$RC"
assert_match "it says how many and how to pick one" 'the output holds 2 tables .*--table N' "$ERR"
import --tool bonnie --target imp-post --table 3 "$FX/bonnie/pasted-1.03e-two-tables.txt"
assert_match "--table 3 of 2: exit 1, why" '^1 .*there is no table 3: the output holds 2 tables' "$RC $ERR"
assert_eq "refused posts store nothing" "$before" "$(sql "SELECT count(*) FROM plans")"
import --tool bonnie --target imp-post --table 2 "$FX/bonnie/pasted-1.03e-two-tables.txt"
assert_eq "--table 2: exit 0" 0 "$RC"
assert_near "table 2: its block read" "$(jq -n '606692 * 1024 / 1e6')" \
    "$(jq -r '.metrics[] | select(.name == "disk.seq_read.mbps") | .value' <<<"$OUT")"
assert_status 200 GET "/api/v1/plans/$(jq -r .plan_id <<<"$OUT")"
assert_eq "the plan says which table" "2 table 1" "$(json '.plan.import | "\(.table) \(.format) \(.runs)"')"
import --tool bonnie --target imp-post --table 1 "$FX/bonnie/pasted-1.03e-two-tables.txt"
assert_eq "--table 1 of the same post: exit 0" 0 "$RC"
assert_near "table 1: its block write" "$(jq -n '191259 * 1024 / 1e6')" \
    "$(jq -r '.metrics[] | select(.name == "disk.seq_write.mbps") | .value' <<<"$OUT")"
import --tool bonnie --target imp-post --table 1 "$FX/bonnie/pasted-1.03e-two-tables.txt"
assert_match "the same table again: exit 1, imported before" '^1 .*imported for target imp-post before' "$RC $ERR"
import --tool bonnie --target imp-post --table 0 "$FX/bonnie/pasted-1.03e-two-tables.txt"
assert_eq "--table 0: exit 2" 2 "$RC"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary \
    "$(jq -n --rawfile out "$FX/bonnie/pasted-1.03e-two-tables.txt" '{tool: "bonnie", target: "imp-post", table: 0, output: $out}')"
assert_eq "table 0 is refused at /table" "/table" "$(json '.errors[0].path')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary \
    "$(jq -n --rawfile out "$FX/fio/seq-write.json" '{tool: "fio", target: "imp-post", table: 1, output: $out}')"
assert_match "a table of a tool without tables is refused" '^/output fio: its outputs hold no tables' \
    "$(json '"\(.errors[0].path) \(.errors[0].message)"')"

# --- damaged outputs: exit 1, the reason, nothing stored ------------------------------
before=$(sql "SELECT count(*) FROM plans")/$(sql "SELECT count(*) FROM results")/$(sql "SELECT count(*) FROM targets")
bad() { # TOOL FILE MESSAGE
    import --tool "$1" --target imp-bad "$FX/$2"
    assert_eq "import $2: exit 1" 1 "$RC"
    assert_match "import $2: says why" "$3" "$ERR"
}
bad fio fio/bad/seq-write-truncated.json 'fio: the JSON ends early at line 128 \(cut off\?\)'
bad fio fio/bad/seq-write-bw-not-number.json 'write\.bw_bytes is not a number'
bad fio fio/bad/wrong-format-iperf3.json 'looks like iperf3 output: import it as tool iperf3'
bad fio fio/bad/error-proc.json 'failed with error 2 \(No such file or directory\)'
bad iperf3 iperf3/bad/refused.json 'the run failed: unable to connect to server: Connection refused'
bad iperf iperf/bad/client-P2-truncated.csv 'ends in the middle of line 1'
bad bonnie bonnie/bad/f-s4096-r2048-put-block-not-number.csv 'field 12 \(put_block: block write K/s\) is not a number: "326x56"'
bad sysbench sysbench/bad/cpu-t2-truncated.txt 'sysbench: the output ends in the middle of line 19'
bad stress-ng stress-ng/bad/cpu1-t2-rate-not-number.yaml 'bogo-ops-per-second-real-time of cpu is not a number'
assert_match "the error names the field of the request" '/output: fio:|/output: ' "$ERR"
after=$(sql "SELECT count(*) FROM plans")/$(sql "SELECT count(*) FROM results")/$(sql "SELECT count(*) FROM targets")
assert_eq "damaged outputs store nothing (plans/results/targets)" "$before" "$after"

# The same output again: refused, naming the first import.
first=$(sql "SELECT plan_id FROM imports WHERE tool = 'iperf3' AND target_name = 'imp-net' ORDER BY id LIMIT 1")
import --tool iperf3 --target imp-net "$FX/iperf3/client-tcp-P4.json"
assert_eq "an output imported twice: exit 1" 1 "$RC"
assert_match "it names the first import" "imported for target imp-net before, as plan $first" "$ERR"
assert_eq "nothing stored twice" "$after" \
    "$(sql "SELECT count(*) FROM plans")/$(sql "SELECT count(*) FROM results")/$(sql "SELECT count(*) FROM targets")"
# ... but the same file for another target is another run's record.
import --tool iperf3 --target imp-net2 "$FX/iperf3/client-tcp-P4.json"
assert_eq "the same output for another target imports" 0 "$RC"

# Usage errors stay local (exit 2).
import --tool iozone --target x "$FX/fio/seq-write.json"
assert_eq "unknown tool: exit 2" 2 "$RC"
import --tool fio "$FX/fio/seq-write.json"
assert_eq "no --target: exit 2" 2 "$RC"
import --tool fio --target x --at yesterday "$FX/fio/seq-write.json"
assert_eq "bad --at: exit 2" 2 "$RC"
import --tool fio --target x --label novalue "$FX/fio/seq-write.json"
assert_eq "bad --label: exit 2" 2 "$RC"
import --tool fio --target x "$HV_TMP/no-such-file"
assert_eq "missing file: exit 2" 2 "$RC"
printf 'caf\xe9\n' >"$HV_TMP/latin1.txt"
import --tool sysbench --target x "$HV_TMP/latin1.txt"
assert_eq "not UTF-8: exit 2" 2 "$RC"
assert_match "not UTF-8: says where" 'byte 3 is not UTF-8 text' "$ERR"

# --- the API directly ---------------------------------------------------------------
body() { # TOOL FILE [jq edit]
    jq -n --arg tool "$1" --rawfile out "$FX/$2" \
        "{tool: \$tool, target: \"api-host\", output: \$out} | ${3:-.}"
}
assert_status 201 POST /api/v1/imports "${S[@]}" --data-binary "$(body sysbench sysbench/cpu-threads2-prime10000.txt '.at = "2012-06-01" | .name = "old sysbench"')" \
    -D "$HV_TMP/headers"
P=$(json .plan_id)
assert_match "201 has a Location header naming the plan" "^Location: /api/v1/plans/$P\$" \
    "$(tr -d '\r' <"$HV_TMP/headers" | grep -i '^Location:')"
assert_eq "the name given is the plan's" "old sysbench 2012-06-01T00:00:00.000Z" \
    "$(json '"\(.name) \(.started_at)"')"
assert_status 200 GET "/api/v1/plans/$P/jobs"
assert_status 200 GET "/api/v1/jobs/$(json '.items[0].id')"
assert_eq "the job's spec is the tool's workload" "sysbench cpu sysbench" \
    "$(json '"\(.spec.id) \(.spec.kind) \(.spec.engine)"')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(body fio fio/bad/seq-write-truncated.json)"
assert_eq "400 names /output and the reason" "/output fio: the JSON ends early at line 128 (cut off?)" \
    "$(json '"\(.errors[0].path) \(.errors[0].message)"')"
assert_status 400 POST /api/v1/imports "${S[@]}" \
    --data-binary "$(body fio fio/seq-write.json '.tool = "iozone" | .at = "soon" | .target = "a/b" | .labels = {"bad key": "x"} | .extra = 1')"
assert_eq "400 names every bad member" "/at /extra /labels/bad key /target /tool" \
    "$(json '[.errors[].path] | sort | join(" ")')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(body fio fio/seq-write.json '.at = "2999-01-01T00:00:00Z"')"
assert_match "a future --at is refused" 'future' "$(json '.errors[0].message')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary '{"tool":"fio","target":"x","output":""}'
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary '{"tool":"fio"'
assert_status 401 POST /api/v1/imports --data-binary "$(body fio fio/seq-write.json)"
assert_status 403 POST /api/v1/imports -H "Authorization: Bearer $READ_TOKEN" --data-binary "$(body fio fio/seq-write.json)"
assert_status 403 POST /api/v1/imports -H "Authorization: Bearer $WORKER_TOKEN" --data-binary "$(body fio fio/seq-write.json)"
# --- studies: several outputs under labels ------------------------------------------------
# study_body OUTPUTS_JQ [jq edit]: a study on study-host, baseline "host".
study_body() {
    jq -n --rawfile h1 "$FX/bonnie/s64-r32.csv" --rawfile h2 "$FX/bonnie/s64-r32.txt" \
        --rawfile d1 "$FX/bonnie/D-f-s1024-r512.csv" --rawfile g1 "$FX/bonnie/lkml-2003-04-17-1.02b-x2-csv2txt.txt" \
        --rawfile fio "$FX/fio/seq-write.json" --rawfile sc "$FX/sysbench/cpu-t2.txt" \
        --rawfile sf "$FX/sysbench/fileio-seqwr.txt" --rawfile bad "$FX/fio/bad/seq-write-truncated.json" \
        "{study: \"s1\", target: \"study-host\", baseline: \"host\", outputs: $1} | ${2:-.}"
}
before=$(sql "SELECT count(*) FROM plans")/$(sql "SELECT count(*) FROM results")
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "host", tool: "bonnie", output: $h1}, {label: "host", tool: "fio", output: $fio}]')"
assert_match "one label is no study" 'at least two labels; this one has 1' "$(json -r '.errors[0].message')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "vm", tool: "bonnie", output: $h1}, {label: "bare metal", tool: "iozone", output: "", at: "soon"}]' \
    '.baseline = "host" | .extra = 1')"
assert_eq "every bad member named" '/extra' "$(json -r '[.errors[].path] | sort | join(" ")')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "vm", tool: "bonnie", output: $h1}, {label: "bare metal", tool: "iozone", output: "", at: "soon"}]')"
assert_eq "bad outputs named by index" '/outputs/1/at /outputs/1/label /outputs/1/output /outputs/1/tool' \
    "$(json -r '[.errors[].path] | sort | join(" ")')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "vm", tool: "bonnie", output: $h1}, {label: "bm", tool: "bonnie", output: $h1}]')"
assert_eq "the baseline must be a label" '/baseline' "$(json -r '.errors[0].path')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "host", tool: "bonnie", output: $h1}, {label: "vm", tool: "fio", output: $bad}]')"
assert_eq "an output that does not parse: its path and reason" \
    '/outputs/1/output fio: the JSON ends early at line 128 (cut off?)' \
    "$(json -r '"\(.errors[0].path) \(.errors[0].message)"')"
# Outputs of one size (one identity) of two machines under one label.
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "host", tool: "bonnie", output: $d1}, {label: "vm", tool: "bonnie", output: $d1},
      {label: "host", tool: "bonnie", output: $g1}]')"
assert_match "one label's runs of one workload must be runs of one workload" \
    '^/outputs/0 label host: bonnie\+\+: the output holds 3 runs, and they are not runs of one workload: run 2 has name "Gaia" where run 1 has "vm"' \
    "$(json -r '"\(.errors[0].path) \(.errors[0].message)"')"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "host", tool: "sysbench", output: $sc}, {label: "vm", tool: "sysbench", output: $sf}]')"
assert_match "a tool measuring two kinds is refused" 'measures disk where an earlier one measures cpu' \
    "$(json -r '.errors[0].message')"
assert_eq "nothing was stored" "$before" \
    "$(sql "SELECT count(*) FROM plans")/$(sql "SELECT count(*) FROM results")"
assert_status 403 POST /api/v1/imports -H "Authorization: Bearer $READ_TOKEN" --data-binary "$(study_body \
    '[{label: "host", tool: "bonnie", output: $h1}, {label: "vm", tool: "bonnie", output: $h1}]')"
# Two tools, outputs of other machines under each label: a workload per tool.
assert_status 201 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "host", tool: "bonnie", output: $h1}, {label: "host", tool: "fio", output: $fio},
      {label: "vm", tool: "bonnie", output: $h2}, {label: "vm", tool: "fio", output: $fio, at: "2011-01-01"}]' \
    '.name = "two tools"')" -D "$HV_TMP/headers"
SP=$(json .plan_id)
assert_match "201 has a Location header" "^Location: /api/v1/plans/$SP\$" \
    "$(tr -d '\r' <"$HV_TMP/headers" | grep -i '^Location:')"
assert_eq "the receipt: runs by label, configuration and workload" \
    'host/default/bonnie/1 host/default/fio/1 vm/study=vm/bonnie/1 vm/study=vm/fio/1' \
    "$(json -r '[.runs[] | "\(.label)/\(.configuration)/\(.workload)/\(.repetition)"] | join(" ")')"
assert_eq "an output's own at is its run's start" '2011-01-01T00:00:00.000Z' "$(json -r '.runs[3].started_at')"
assert_status 200 GET "/api/v1/plans/$SP"
assert_eq "the plan: two workloads, the labels as levels" 'two tools bonnie,fio host,vm 1 1' \
    "$(json -r '"\(.plan.name) \([.plan.workloads[].id] | join(",")) \(.plan.factors.study | join(",")) \(.plan.repetitions.min) \(.plan.repetitions.max)"')"
assert_eq "each run keeps its output (three distinct, fio's twice)" '4|3|2' \
    "$(sql "SELECT count(r.raw), count(DISTINCT r.raw), count(*) FILTER (WHERE r.raw LIKE '%fio version%') FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $SP")"
assert_status 409 POST /api/v1/imports "${S[@]}" --data-binary "$(study_body \
    '[{label: "host", tool: "bonnie", output: $h1}, {label: "host", tool: "fio", output: $fio},
      {label: "vm", tool: "bonnie", output: $h2}, {label: "vm", tool: "fio", output: $fio, at: "2011-01-01"}]')"
assert_match "the same study again: 409 naming it" "as plan $SP\$" "$(json -r .detail)"
# The CLI: LABEL=FILE arguments; local mistakes exit 2.
import --study s2 --target study-host --baseline a a="$FX/bonnie/s64-r32.csv"
assert_eq "a study of one output: exit 2" 2 "$RC"
import --study s2 --target study-host --baseline a a="$FX/bonnie/s64-r32.csv" b:fio="$FX/fio/seq-write.json"
assert_eq "no --tool for a LABEL=FILE: exit 2" 2 "$RC"
assert_match "it says how to name one" 'give --tool, or write LABEL:TOOL=FILE' "$ERR"
import --study s2 --tool bonnie --target study-host --baseline a a="$FX/bonnie/s64-r32.csv" "$FX/fio/seq-write.json"
assert_eq "an argument without LABEL=: exit 2" 2 "$RC"
import --study s2 --tool bonnie --target study-host --baseline a a="$FX/bonnie/s64-r32.csv" \
    b:fio="$FX/fio/seq-write.json"
assert_eq "hvbench import --study: exit 0" "0 s2 a" "$RC $(jq -r '"\(.study) \(.baseline)"' <<<"$OUT")"

head -c 300000 /dev/zero | tr '\0' 'x' >"$HV_TMP/big.txt"
jq -n --rawfile out "$HV_TMP/big.txt" '{tool: "fio", target: "x", output: $out}' >"$HV_TMP/big.json"
assert_status 413 POST /api/v1/imports "${S[@]}" --data-binary @"$HV_TMP/big.json"
assert_status 409 POST /api/v1/imports "${S[@]}" --data-binary "$(body sysbench sysbench/cpu-threads2-prime10000.txt)"
assert_match "409 names the first import" "as plan $P\$" "$(json .detail)"
assert_status 405 GET /api/v1/imports

hv_finish
