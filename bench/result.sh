# shellcheck shell=bash
# Sourced by bench/lib.sh and bench/local.sh: bench_result, the one way a
# benchmark records a figure in bench/results/NAME.json, and BENCH_QUICK.
#
# bench/results/NAME.json (one file a script, rewritten by the script's
# first bench_result call of a run, each later call adds a figure):
#   {"bench": NAME, "command": ..., "quick": true|false, "date": ISO 8601,
#    "commit": short hash (+"-dirty"), "machine": {"cpu", "cores",
#    "kernel", "load": 1-minute load average at each figure, ...},
#    "figures": [{"figure", "value", "unit", "peer", "peer_value",
#                 "ratio", "goal", "met", "rounds", "note", "load"}]}
# tools/bench-table.py turns every file into the table at the top of
# BENCHMARKS.md.

# BENCH_QUICK=1: fewer rounds and smaller sizes (make bench under 10 min).
BENCH_QUICK=${BENCH_QUICK:-0}
BENCH_RESULTS_DIR=${BENCH_RESULTS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/results}
BENCH_RESULT_STARTED=0
# The checkout whose code is measured: the one this file is in.
BENCH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bench_quick QUICK FULL: prints QUICK under BENCH_QUICK=1, FULL otherwise.
bench_quick() {
    if [[ $BENCH_QUICK == 1 ]]; then echo "$1"; else echo "$2"; fi
}

# bench_result NAME FIGURE VALUE UNIT PEER PEER_VALUE RATIO GOAL ROUNDS [NOTE]
# Records one figure of benchmark NAME: VALUE (in UNIT) measured in the
# same run as PEER's PEER_VALUE, their RATIO, and the GOAL the ratio is
# held to: ">=0.5", "<=0.001" (met: yes/no) or "-" (none). PEER may be "-"
# for a figure without an outside peer (then PEER_VALUE and RATIO are "-"
# too, and the figure is the ratio itself, e.g. a share). The command is
# BENCH_COMMAND when the script set it, else how the script was started.
bench_result() {
    local name=$1 figure=$2 value=$3 unit=$4 peer=$5 peer_value=$6 ratio=$7 goal=$8
    local rounds=$9 note=${10:-} file commit load cmd met=-
    file=$BENCH_RESULTS_DIR/$name.json
    mkdir -p "$BENCH_RESULTS_DIR"
    load=$(cut -d' ' -f1 /proc/loadavg)
    if [[ $goal =~ ^(\>=|\<=)([0-9.]+)$ && $ratio != - ]]; then
        met=$(awk -v r="$ratio" -v op="${BASH_REMATCH[1]}" -v g="${BASH_REMATCH[2]}" \
            'BEGIN {ok = (op == ">=") ? (r >= g) : (r <= g); print ok ? "yes" : "no"}')
    fi
    if [[ $BENCH_RESULT_STARTED == 0 || ! -f $file ]]; then
        commit=$(git -C "$BENCH_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
        # "-dirty": the code measured differs from the commit (changes to
        # the benchmarks themselves and to BENCHMARKS.md do not count).
        if [[ -n $(git -C "$BENCH_REPO" status --porcelain --untracked-files=no -- . \
            ':!bench' ':!BENCHMARKS.md' 2>/dev/null) ]]; then
            commit+=-dirty
        fi
        cmd=${BENCH_COMMAND:-$([[ $BENCH_QUICK == 1 ]] && printf 'BENCH_QUICK=1 ')bench/$(basename "$0")}
        jq -n --arg bench "$name" --arg cmd "$cmd" --argjson quick "$([[ $BENCH_QUICK == 1 ]] && echo true || echo false)" \
            --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg commit "$commit" \
            --arg cpu "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" \
            --argjson cores "$(nproc)" --arg kernel "$(uname -r)" \
            --arg mem "$(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)" \
            '{bench: $bench, command: $cmd, quick: $quick, date: $date, commit: $commit,
              machine: {cpu: $cpu, cores: $cores, memory: $mem, kernel: $kernel}, figures: []}' \
            >"$file.tmp" && mv "$file.tmp" "$file"
        BENCH_RESULT_STARTED=1
    fi
    jq --arg figure "$figure" --arg value "$value" --arg unit "$unit" --arg peer "$peer" \
        --arg pv "$peer_value" --arg ratio "$ratio" --arg goal "$goal" --arg met "$met" \
        --arg rounds "$rounds" --arg note "$note" --arg load "$load" \
        'def num: if . == "-" or . == "" then null else tonumber end;
         .figures |= (map(select(.figure != $figure)) + [{figure: $figure, value: ($value | num),
            unit: $unit, peer: (if $peer == "-" then null else $peer end), peer_value: ($pv | num),
            ratio: ($ratio | num), goal: (if $goal == "-" then null else $goal end),
            met: (if $met == "-" then null else $met end), rounds: ($rounds | num),
            note: $note, load: ($load | num)}])' "$file" >"$file.tmp" && mv "$file.tmp" "$file"
    echo "# result $name: $figure = $value $unit${peer:+, $peer $peer_value}, ratio $ratio (goal $goal: $met)"
}

# bench_median NUMBERS...: the median (the mean of the middle two for an
# even count).
bench_median() {
    printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1}
        END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

# bench_ratio A B [DIGITS]: A / B with DIGITS decimals (3), "-" when B is 0.
bench_ratio() {
    awk -v a="$1" -v b="$2" -v d="${3:-3}" 'BEGIN {if (b == 0) print "-"; else printf "%.*f\n", d, a / b}'
}
