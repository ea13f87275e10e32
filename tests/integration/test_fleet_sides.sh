#!/usr/bin/env bash
# One observation per round (migrations/042_round_values.sql), read alike
# by the fleet's per-host view and by the stop rule and the report.
#
# Fleet: three hosts of one speed, fa with one guest, fb with three, fc
# with two, every guest of one speed too; one of fb's guest jobs fails.
# The per-host view keeps each host's bare metal and its guests apart and
# averages a side's targets per round first, so every host's ratio to the
# fleet median is 1 on both sides, whatever its guest count or a failed
# guest job; its margin is the report's default, 1 %.
#
# Repetitions: a plan whose two guests swing in opposite directions (their
# mean is steady, each guest is not): the server's stop rule judges each
# target's series and stops at max without the width, and the report's
# repetitions section judges the same series alike; a steady plan reaches
# the width on both. Results are uploaded by hand, so every value is known.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
declare -A TOKEN

reg() { # NAME KIND HOST LABELS: registers a target, keeps its worker token
    local body
    body=$(jq -nc --arg n "$1" --arg k "$2" --arg h "$3" --argjson l "$4" \
        '{name: $n, kind: $k, facts: {}, labels: $l} + (if $h == "" then {} else {host: $h} end)')
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary "$body"
    [[ $STATUS == 200 ]] || hv_die "registering $1: $STATUS $BODY"
    TOKEN[$1${3:+@$3}]=$(json -r .worker_token)
}

# value TARGET ROUND: the value a job of TARGET uploads in ROUND, set by
# the test's VALUE function; "error" makes the job fail.
# drain NAME...: each target (a key of TOKEN) claims and uploads until none
# of them gets a job.
drain() {
    local busy=1 t id attempt target round v
    while ((busy)); do
        busy=0
        for t in "$@"; do
            api POST /api/v1/jobs/claim -H "Authorization: Bearer ${TOKEN[$t]}" --data-binary '{}'
            [[ $STATUS == 200 ]] || continue
            busy=1
            id=$(json .job.id)
            attempt=$(json .job.attempt)
            round=$(json .job.repetition)
            api GET "/api/v1/jobs/$id" "${R[@]}"
            target=$(json -r .target)
            v=$(VALUE "$target" "$round")
            if [[ $v == error ]]; then
                api POST "/api/v1/jobs/$id/result" -H "Authorization: Bearer ${TOKEN[$t]}" \
                    --data-binary "{\"attempt\":$attempt,\"status\":\"error\",\"error\":\"test\"}"
            else
                api POST "/api/v1/jobs/$id/result" -H "Authorization: Bearer ${TOKEN[$t]}" \
                    --data-binary "{\"attempt\":$attempt,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$v,\"unit\":\"score\"}]}"
            fi
            [[ $STATUS == 201 ]] || hv_die "result of job $id: $STATUS $BODY"
        done
    done
}

# --- the fleet --------------------------------------------------------------------------
for h in fa fb fc; do reg "$h" host "" '{"pool":"sides"}'; done
reg g1 guest fa '{"role":"sv"}'
for g in g1 g2 g3; do reg "$g" guest fb '{"role":"sv"}'; done
for g in g1 g2; do reg "$g" guest fc '{"role":"sv"}'; done
TARGETS=(fa fb fc g1@fa g1@fb g2@fb g3@fb g1@fc g2@fc)

# Every host 1000, every guest 500, times 0.998, 1, 1.002 in rounds 1..3;
# fb/g2's job of round 2 fails.
# shellcheck disable=SC2317 # called by drain
VALUE() {
    local base=500
    [[ $1 == */* ]] || base=1000
    if [[ $1 == fb/g2 && $2 == 2 ]]; then
        echo error
        return
    fi
    awk -v b="$base" -v r="$2" 'BEGIN { printf "%.6f", b * (1 + 0.002 * (r - 2)) }'
}

assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    '{"name":"sides","targets":{"host":{"label":"pool=sides"},"guests":{"label":"role=sv"}},
      "max_parallel_hosts":3,"repetitions":{"min":3,"max":3},
      "workloads":[{"id":"c","kind":"cpu","engine":"builtin","params":{"seconds":1,"copies":1}}]}'
F=$(json .id)
assert_eq "one child per host" 3 "$(json '.children | length')"
drain "${TARGETS[@]}"
assert_status 200 GET "/api/v1/plans/$F" "${R[@]}"
hv_log "fleet plan: $(json -c '[.status, .jobs]')"
assert_eq "the failed guest job is failed" 1 "$(json .jobs.failed)"

assert_status 200 GET "/api/v1/plans/$F/report" "${R[@]}"
hv_log "hosts: $(json -c '[.hosts.series[] | [.where, .median, [.hosts[] | [.host, .n, .ratio]]]]')"
assert_eq "the margin is the report's default" 1 "$(json .hosts.margin_pct)"
assert_eq "the host side and the guest side are separate series" '["guests","host"]' \
    "$(json -c '[.hosts.series[] | select(.metric == "cpu.score") | .where] | sort')"
side() { # WHERE FILTER
    json -c "[.hosts.series[] | select(.metric == \"cpu.score\" and .where == \"$1\") | $2]"
}
assert_eq "bare metal: the median of the hosts' geometric means" '[1000]' "$(side host '.median | round')"
assert_eq "guests: the median of the guest sides'" '[500]' "$(side guests '.median | round')"
assert_eq "bare metal: every host at ratio 1.000000" '[["fa",3,1],["fb",3,1],["fc",3,1]]' \
    "$(side host '.hosts[] | [.host, .n, (.ratio * 1e6 | round / 1e6)]')"
assert_eq "guests: 1, 3 or 2 guests and a failed job alike, ratio 1.000000" \
    '[["fa",3,1],["fb",3,1],["fc",3,1]]' \
    "$(side guests '.hosts[] | [.host, .n, (.ratio * 1e6 | round / 1e6)]')"
assert_eq "no outlier" 0 "$(json '.hosts.outliers | length')"
# What the view averaged before: a host's jobs together, by job count.
sql() { "$PG" psql "$HV_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 -c "$1"; }
assert_eq "(by job count, round 2 would have been fa's 750 against fb's 2000/3)" \
    "750.000 666.667" \
    "$(sql "SELECT string_agg(to_char(v, 'FM999990.000'), ' ' ORDER BY host) FROM (
        SELECT p.spec->'targets'->>'host' AS host, avg(m.value) AS v FROM plans p
        JOIN jobs j ON j.plan_id = p.id JOIN results r ON r.job_id = j.id AND r.status = 'ok'
        JOIN metrics m ON m.result_id = r.id WHERE p.parent_id = $F AND j.repetition = 2
        AND p.spec->'targets'->>'host' IN ('fa', 'fb') GROUP BY 1) x")"

# --- repetitions: the report judges as the server does --------------------------------------
reg rh host "" '{}'
reg v1 guest rh '{}'
reg v2 guest rh '{}'
RT=(rh v1@rh v2@rh)
rplan() { # NAME
    printf '{"name":"%s","targets":{"host":"rh","guests":{"domains":["v1","v2"]}},
      "repetitions":{"min":3,"max":3,"ci_pct":2},
      "workloads":[{"id":"c","kind":"cpu","engine":"builtin","params":{"seconds":1,"copies":1}}]}' "$1"
}
# Swinging guests: v1 900, 1100, 1000 and v2 1100, 900, 1000 (their mean
# 1000 every round); the host 1000.
# shellcheck disable=SC2317 # called by drain
VALUE() {
    case $1 in
    rh/v1) echo $((1000 + (${2} == 1 ? -100 : ${2} == 2 ? 100 : 0))) ;;
    rh/v2) echo $((1000 + (${2} == 1 ? 100 : ${2} == 2 ? -100 : 0))) ;;
    *) echo 1000 ;;
    esac
}
# judged NAME SERVER REPORT: runs plan NAME with VALUE's values; the
# server's decision is SERVER ("max 3"), the report's repetitions REPORT
# ("reached, the server's decision, the configuration's stop").
judged() {
    assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(rplan "$1")"
    P=$(json .id)
    drain "${RT[@]}"
    assert_status 200 GET "/api/v1/plans/$P" "${R[@]}"
    assert_eq "$1: the server decides" "$2" "$(json -r '"\(.rounds.decision) \(.rounds.rounds)"')"
    assert_status 200 GET "/api/v1/plans/$P/report" "${R[@]}"
    assert_eq "$1: the report judges as the server does" "$3" \
        "$(json -r '"\(.repetitions.reached) \(.repetitions.server.decision) \(.repetitions.configurations[0].stop)"')"
}
judged swing "max 3" "false max max"
assert_match "naming a guest's own series as the widest" '^rh/v[12]$' \
    "$(json -r '.repetitions.configurations[0].widest.target')"

# Steady: every value 1000 +- 0.1 %.
# shellcheck disable=SC2317 # called by drain
VALUE() { echo $((1000 + ${2} % 2)); }
judged steady "precise 3" "true precise width"

hv_finish
