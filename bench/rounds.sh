#!/usr/bin/env bash
# Rounds to a verdict under two rules on the same seeds: simulated plans
# of two configurations (a default and a level, one run of each a round;
# log-normal noise of CV 3 %; optionally a 1 % random walk a round common
# to both, and one run in ten at random ×1.2) fed through today's rule
# (the stop rule of adaptive repetitions, min 3, max 50, ci_pct 2, and the
# report's Welch comparison at the stop) and the paired rule (Yuen's
# trimmed paired comparison, hv_effect_paired, judged after every round by
# the group-sequential rule of lib/sequential.h). build/bench/rounds,
# bench/roundsim.h. Records the median rounds to `better` for a +5 %
# effect, the paired rule's against today's (ratio paired / today; goals:
# <= 0.5 with drift and bursts, <= 1.3 with noise only; p90, verdicts and
# the intervals' coverage in the note), and each rule's false better/worse
# rate on null data at margins 0.1 % and 1 % (goal 5 %; its
# Clopper–Pearson one-sided upper 95 % bound, goal 6 %, in the note). No
# server, no database; the figures depend on the seeds only.
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
# Rounds to better: the paired rule's median against today's on the same
# seeds, the ratio paired / today held to the issue's goals (at least 2×
# fewer with drift and bursts: <= 0.5; with noise only at most 1.3×).
# False claims: one row per rule and margin, the rate held to 5 %, its
# Clopper–Pearson upper bound (goal 6 %) in the note.
jq -r '.seeds as $n
    | def rounds: if . == null then "never" else tostring end;
      def pct: . * 100 | round / 100 | tostring;
      def how: .name | sub("^[^,]*, "; "");
      def stop: "rounds at the stop: median \(.p50), p90 \(.p90), mean \(.mean_rounds | pct); stopped by the width in \(.precise / $n * 100 | pct) %, decided in \(.decided / $n * 100 | pct) %";
      def cover: "95 % interval holds the truth in " + ([.coverage[] | "\(.covered_pct | pct) % at \(.rounds)"] | join(", ")) + " rounds";
      [.experiments[] | select(.effect_pct != 0)] as $eff
    | ($eff | map(select(.rule == "sequential"))[]) as $new
    | ($eff[] | select(.rule == "today" and .name == $new.name)) as $old
    | $new.margins[0] as $m | $old.margins[0] as $om
    | ["rounds to better, +\($new.effect_pct) %, \($new | how) (margin \($m.margin_pct) %): paired rule against today'"'"'s",
       ($new.better_p50 | if . == null then "-" else tostring end), "rounds", "today'"'"'s rule",
       ($old.better_p50 | if . == null then "-" else tostring end),
       (if $new.better_p50 == null or $old.better_p50 == null then "-"
        else ($new.better_p50 / $old.better_p50 * 1000 | round / 1000 | tostring) end),
       (if $new.drift_pct > 0 then "<=0.5" else "<=1.3" end),
       "paired rule: p90 \($new.better_p90 | rounds) (a seed not ending better counts as never), better \($m.better / $n * 100 | pct) %, inconclusive \($m.inconclusive / $n * 100 | pct) %, worse \($m.worse / $n * 100 | pct) %; \($new | stop); \($new | cover). Today'"'"'s: p90 \($old.better_p90 | rounds), better \($om.better / $n * 100 | pct) %, inconclusive \($om.inconclusive / $n * 100 | pct) %; \($old | stop); \($old | cover). \($n) seeds"]
    | @tsv' "$WORK/rounds.json" >"$WORK/figures.tsv" || die "could not read the figures"
jq -r '.seeds as $n
    | def pct: . * 100 | round / 100 | tostring;
      def rule_name: if . == "today" then "today'"'"'s rule" else "paired rule" end;
      .experiments[] | select(.effect_pct == 0) | . as $e
    | (.name | sub("^[^,]*, "; "")) as $how
    | .margins[]
    | ["false better/worse on null data, margin \(.margin_pct) %, \($how), \($e.rule | rule_name)",
       (.false | tostring), "seeds", "null seeds", ($n | tostring), (.false / $n | tostring), "<=0.05",
       "the ratio is the rate; Clopper–Pearson one-sided upper 95 % bound \(.false_upper95_pct | pct) % (goal 6 %: \(if .false_upper95_pct <= 6 then "met" else "missed" end)); better \(.better), worse \(.worse); rounds at the stop: median \($e.p50), mean \($e.mean_rounds | pct); 95 % interval holds the truth in " + ([$e.coverage[] | "\(.covered_pct | pct) % at \(.rounds)"] | join(", ")) + " rounds"]
    | @tsv' "$WORK/rounds.json" >>"$WORK/figures.tsv" || die "could not read the figures"
while IFS=$'\t' read -r figure value unit peer peer_value ratio goal note; do
    bench_result rounds "$figure" "$value" "$unit" "$peer" "$peer_value" "$ratio" "$goal" 1 "$note"
done <"$WORK/figures.tsv"
echo "reproduce: make build/bench/rounds && $BENCH_COMMAND"
