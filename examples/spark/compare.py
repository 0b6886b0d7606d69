"""Compares two `tokentime summary -o json` documents, A (merged from Spark partitions) and B
(one run over the same files). Exit 1 naming what differs.

    compare.py exact A B    identical, but for TPOT under load (see below)
    compare.py tdigest A B  past the exact limit: the same groups, counts, min, max and nulls,
                            and every quantile within the t-digest's error (0.5% relative at
                            p50 to p99, 1% at p99.9: the bound docs/digests.md states)

TPOT under load (`analysis.tpot_by_in_flight` and its finding) counts the requests in flight
from each input's own times: a partition's, under Spark, so a request in flight across a
partition boundary is not counted by the other side. It is left out of both comparisons.
"""

import json
import sys

BOUND = {"p50": 0.005, "p90": 0.005, "p95": 0.005, "p99": 0.005, "p99.9": 0.01}


def groups(doc):
    return {json.dumps(g["key"], sort_keys=True): g for g in doc["groups"]}


def without_in_flight(doc):
    for g in doc["groups"]:
        g.get("analysis", {}).pop("tpot_by_in_flight", None)
        g["findings"] = [f for f in g.get("findings", []) if f.get("kind") != "tpot_under_load"]
    return doc


def exact(a, b):
    a, b = without_in_flight(a), without_in_flight(b)
    if a == b:
        print("spark test: merged JSON summary identical to one run's (TPOT under load aside)")
        return 0
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print(f"compare: {k} differs", file=sys.stderr)
    ga, gb = groups(a), groups(b)
    for key in sorted(ga.keys() | gb.keys()):
        if ga.get(key) != gb.get(key):
            print(f"compare: group {key} differs", file=sys.stderr)
    return 1


def tdigest(a, b):
    ga, gb = groups(a), groups(b)
    bad = []
    if ga.keys() != gb.keys():
        bad.append(f"groups differ: {sorted(ga)} vs {sorted(gb)}")
    checked = 0
    for key in ga.keys() & gb.keys():
        for name, ma in ga[key]["metrics"].items():
            mb = gb[key]["metrics"].get(name)
            if mb is None:
                bad.append(f"{key} {name}: missing")
                continue
            for exact in ("count", "min", "max", "nulls"):
                if ma.get(exact) != mb.get(exact):
                    bad.append(f"{key} {name}.{exact}: {ma.get(exact)} vs {mb.get(exact)}")
            for q, bound in BOUND.items():
                x, y = (m.get("quantiles", {}).get(q) for m in (ma, mb))
                if x is None and y is None:
                    continue
                checked += 1
                if x is None or y is None or abs(x - y) > bound * max(abs(y), 1e-9):
                    bad.append(f"{key} {name}.{q}: {x} vs {y} (bound {bound:.1%})")
    for line in bad[:20]:
        print("compare:", line, file=sys.stderr)
    if bad:
        return 1
    # (Token counts of few distinct values stay exact past the limit: their values are counted.)
    if any(m["exact"] and m["count"] > 400 for m in (g["metrics"]["e2e_ms"] for g in ga.values())):
        print("compare: e2e_ms is still exact: the test is not past --exact-limit", file=sys.stderr)
        return 1
    print(f"spark test: past the exact limit: {checked} quantiles within the t-digest's error")
    return 0


if __name__ == "__main__":
    mode, a_path, b_path = sys.argv[1:4]
    docs = [json.load(open(p)) for p in (a_path, b_path)]
    sys.exit({"exact": exact, "tdigest": tdigest}[mode](*docs))
