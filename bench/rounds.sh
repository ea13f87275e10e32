#!/usr/bin/env bash
# Rounds to a verdict under today's stop rule and comparison: simulated
# plans of two configurations (a default and a level, one run of each a
# round; log-normal noise of CV 3 %; optionally a 1 % random walk a round
# common to both, and one run in ten at random ×1.2) fed through the stop
# rule of adaptive repetitions (min 3, max 50, ci_pct 2) and the report's
# comparison (build/bench/rounds, bench/roundsim.h). Records, per
# experiment, the median rounds to `better` for a +5 % effect (p90 and the
# verdicts in the note), and the false better/worse rate on null data at
# margins 0.1 % and 1 % (its Clopper–Pearson one-sided upper 95 % bound in
# the note). No server, no database; the figures depend on the seeds only.
#
#   make build/bench/rounds && bench/rounds.sh
#
# Env: BENCH_SEEDS (20000; quick 2000), BENCH_THREADS (2), BENCH_QUICK,
# BUILD (build).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/local.sh
source bench/local.sh

ROUNDS=$BUILD/bench/rounds
SEEDS=${BENCH_SEEDS:-$(bench_quick 2000 20000)}
THREADS=${BENCH_THREADS:-2}

bench_built "$ROUNDS"
[[ $SEEDS =~ ^[0-9]+$ && $SEEDS -ge 1 ]] || die "BENCH_SEEDS must be a positive number"
[[ $THREADS =~ ^[0-9]+$ && $THREADS -ge 1 ]] || die "BENCH_THREADS must be a positive number"
bench_workdir "${TMPDIR:-/tmp}"

t0=$(date +%s.%N)
"$ROUNDS" --seeds "$SEEDS" --threads "$THREADS" --json >"$WORK/rounds.json" || die "build/bench/rounds failed"
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "# $SEEDS seeds an experiment, $THREADS threads: $secs s"
"$ROUNDS" --seeds "$SEEDS" --threads "$THREADS"

BENCH_COMMAND="BENCH_SEEDS=$SEEDS BENCH_THREADS=$THREADS bench/rounds.sh"
# One line per figure, tab-separated: FIGURE VALUE UNIT PEER PEER_VALUE RATIO GOAL NOTE.
jq -r '.seeds as $n | .experiments[] | . as $e
    | (.name | sub("^[^,]*, "; "")) as $how
    | def rounds: if . == null then "never" else tostring end;
      def pct: . * 100 | round / 100 | tostring;
      "rounds at the stop: median \(.p50), p90 \(.p90), mean \(.mean_rounds | pct); stopped by the width in \(.precise / $n * 100 | pct) %; \($n) seeds" as $stop
    | if .effect_pct != 0 then
        .margins[0] as $m
        | ["rounds to better, +\(.effect_pct) %, \($how) (margin \($m.margin_pct) %)",
           (if .better_p50 == null then "-" else (.better_p50 | tostring) end), "rounds", "-", "-", "-", "-",
           "p90 \(.better_p90 | rounds) (a seed not ending better counts as never); of the seeds ending better, median \(.won_p50 | rounds), p90 \(.won_p90 | rounds); better \($m.better / $n * 100 | pct) %, inconclusive \($m.inconclusive / $n * 100 | pct) %, worse \($m.worse / $n * 100 | pct) %; \($stop)"]
      else
        .margins[]
        | ["false better/worse on null data, margin \(.margin_pct) %, \($how)",
           (.false | tostring), "seeds", "null seeds", ($n | tostring), (.false / $n | tostring), "<=0.05",
           "the ratio is the rate; Clopper–Pearson one-sided upper 95 % bound \(.false_upper95_pct | pct) %; better \(.better), worse \(.worse); \($stop)"]
      end
    | @tsv' "$WORK/rounds.json" >"$WORK/figures.tsv" || die "could not read the figures"
while IFS=$'\t' read -r figure value unit peer peer_value ratio goal note; do
    bench_result rounds "$figure" "$value" "$unit" "$peer" "$peer_value" "$ratio" "$goal" 1 "$note"
done <"$WORK/figures.tsv"
echo "reproduce: make build/bench/rounds && $BENCH_COMMAND"
