#!/usr/bin/env python3
"""Largest circle of source files that call each other, from the objects'
symbol tables: file A depends on file B when A uses a function or variable
B defines. Prints the files of every circle (strongly connected component)
of more than one file, largest first.

    tools/circles.py [BUILD]      (default build; run `make` first)
"""
import os
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
objs = []
for root, _, files in os.walk(os.path.join(build, "obj")):
    for f in files:
        if f.endswith(".o") and "/tests/" not in root and "/bench/" not in root and "/gen" not in root:
            objs.append(os.path.join(root, f))
defined, used = {}, {}
for o in objs:
    src = os.path.relpath(o, os.path.join(build, "obj"))[:-2] + ".c"
    out = subprocess.run(["nm", o], capture_output=True, text=True).stdout
    used[src] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBR":
            defined[parts[2]] = src
        elif len(parts) == 2 and parts[0] == "U":
            used[src].add(parts[1])
graph = {s: {defined[u] for u in us if u in defined and defined[u] != s} for s, us in used.items()}
# Tarjan's algorithm, iteratively.
index, low, onstack, stack, sccs, counter = {}, {}, set(), [], [], [0]
def strong(v):
    work = [(v, iter(sorted(graph[v])))]
    index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); onstack.add(v)
    while work:
        node, it = work[-1]
        nxt = next(it, None)
        if nxt is not None:
            if nxt not in index:
                index[nxt] = low[nxt] = counter[0]; counter[0] += 1
                stack.append(nxt); onstack.add(nxt)
                work.append((nxt, iter(sorted(graph[nxt]))))
            elif nxt in onstack:
                low[node] = min(low[node], index[nxt])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[node])
        if low[node] == index[node]:
            comp = []
            while True:
                w = stack.pop(); onstack.discard(w); comp.append(w)
                if w == node:
                    break
            sccs.append(sorted(comp))
for v in sorted(graph):
    if v not in index:
        strong(v)
circles = sorted((c for c in sccs if len(c) > 1), key=len, reverse=True)
print(f"largest circle: {len(circles[0]) if circles else 1} files")
for c in circles:
    print(f"{len(c)}: {' '.join(c)}")
