#!/usr/bin/env python3
"""Rewrites the table at the top of BENCHMARKS.md from bench/results/*.json.

One row per figure a benchmark recorded with bench_result (bench/result.sh):
the benchmark, the figure and its value, the peer measured in the same run
and its value, their ratio, the goal the ratio is held to and whether it is
met, the rounds, the load average when it was measured, and the date. Below
it, one line per benchmark: its command and commit. The table lives between
the two marker lines; everything else in the file is left as it is.

    tools/bench-table.py [--results DIR] [--doc FILE] [--check]

--check exits 1 (and writes nothing) when the table is not what the files say.
"""
import argparse
import glob
import json
import os
import sys

BEGIN = "<!-- bench-table: begin (tools/bench-table.py writes this table from bench/results/*.json) -->"
END = "<!-- bench-table: end -->"


def fmt_num(v):
    if v is None:
        return "—"
    if isinstance(v, float) and not v.is_integer():
        a = abs(v)
        if a >= 100:
            return f"{v:,.0f}"
        if a >= 1:
            return f"{v:.2f}".rstrip("0").rstrip(".")
        return f"{v:.3g}"
    return f"{int(v):,}"


def cell(s):
    return str(s).replace("|", "\\|")


def table(results_dir):
    files = sorted(glob.glob(os.path.join(results_dir, "*.json")))
    rows = [
        "| benchmark | figure | value | peer | peer value | ratio | goal | met | rounds | load | date |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        name = r.get("bench", os.path.splitext(os.path.basename(path))[0])
        date = r.get("date", "")[:16].replace("T", " ")
        if r.get("quick"):
            date += " (quick)"
        for x in r.get("figures", []):
            unit = x.get("unit") or ""
            value = fmt_num(x.get("value"))
            if x.get("value") is not None and unit:
                value += " " + unit
            peer_value = fmt_num(x.get("peer_value"))
            ratio = fmt_num(x.get("ratio"))
            met = x.get("met") or "—"
            if met == "yes":
                met = "**yes**"
            figure = x.get("figure", "")
            if x.get("note"):
                figure += f" ({x['note']})"
            rows.append(
                "| "
                + " | ".join(
                    cell(c)
                    for c in (
                        f"`{name}`",
                        figure,
                        value,
                        x.get("peer") or "—",
                        peer_value,
                        ratio,
                        (x.get("goal") or "—").replace(">=", "≥ ").replace("<=", "≤ "),
                        met,
                        fmt_num(x.get("rounds")),
                        fmt_num(x.get("load")),
                        date,
                    )
                )
                + " |"
            )
        m = r.get("machine", {})
        notes.append(
            f"- `{name}`: `{r.get('command', '')}` at `{r.get('commit', '')}`"
            f" ({m.get('cores', '?')} × {m.get('cpu', '?')}, kernel {m.get('kernel', '?')})"
        )
    if not files:
        rows.append("| — | no results yet: `make bench` | | | | | | | | | |")
    return "\n".join([BEGIN, *rows, "", *notes, END])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(here, "..", "bench", "results"))
    ap.add_argument("--doc", default=os.path.join(here, "..", "BENCHMARKS.md"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    with open(a.doc, encoding="utf-8") as f:
        text = f.read()
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < b:
        sys.exit(f"bench-table: {a.doc} has no table markers ({BEGIN} ... {END})")
    new = text[:b] + table(a.results) + text[e + len(END):]
    if a.check:
        if new != text:
            sys.exit("bench-table: the table of BENCHMARKS.md is not what bench/results says; run tools/bench-table.py")
        return
    if new != text:
        with open(a.doc + ".tmp", "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(a.doc + ".tmp", a.doc)
    print(f"bench-table: {len(glob.glob(os.path.join(a.results, '*.json')))} result files → {a.doc}")


if __name__ == "__main__":
    main()
