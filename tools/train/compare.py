"""Paired comparison of two models scored on the same examples (the selection rules of sessions
16 and 17): each side is the `--json` list `eval_runtime.py --examples F` writes (an `ok` per
example, in the file's order).

- sign test (session 16): b = examples only X gets right, c = only BASE; X is better at 5%
  (one-sided) if b - c > 1.645 sqrt(b + c).
- suite-mix weighted score (session 17): the exact rate in each (environment, category) of the
  examples, weighted by the acceptance suite's cases per category in one environment (positive
  18, parallel 2, missing 4, irrelevant 3, negation 3, invalid 2; categories the suite lacks, 0),
  averaged over environments. X is better if the 5th percentile of W(X) - W(BASE) over a paired
  bootstrap resampling within each (environment, category) (2000 draws, seed 0) is above 0.

Usage: python3 compare.py --examples V.jsonl BASE.json X.json [X2.json ...]
"""
import argparse
import collections
import json
import math
import random

SUITE_MIX = {"positive": 18, "parallel": 2, "missing": 4, "irrelevant": 3, "negation": 3, "invalid": 2}


def weighted(ok, strata, pick=None):
    total = weight = 0.0
    for (env, category), rows in strata.items():
        w = SUITE_MIX.get(category, 0)
        if w:
            rows = pick[(env, category)] if pick else rows
            total += w * sum(ok[i] for i in rows) / len(rows)
            weight += w
    return total / weight


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", required=True)
    parser.add_argument("base")
    parser.add_argument("candidates", nargs="+")
    args = parser.parse_args()
    strata = collections.defaultdict(list)
    with open(args.examples, encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            example = json.loads(line)
            strata[(example["env"], example["category"])].append(i)
    load = lambda path: [bool(r["ok"]) for r in json.load(open(path, encoding="utf-8"))]
    base = load(args.base)
    print(f"{args.base}: exact {sum(base)}/{len(base)}, W {weighted(base, strata):.4f}")
    for path in args.candidates:
        x = load(path)
        assert len(x) == len(base), f"{path}: {len(x)} results against {len(base)}"
        b = sum(n and not o for n, o in zip(x, base))
        c = sum(o and not n for n, o in zip(x, base))
        need = 1.645 * math.sqrt(b + c)
        rng = random.Random(0)
        diffs = sorted(
            weighted(x, strata, pick) - weighted(base, strata, pick)
            for pick in ({k: [rng.choice(rows) for _ in rows] for k, rows in strata.items()} for _ in range(2000))
        )
        low = diffs[len(diffs) // 20]
        print(f"{path}: exact {sum(x)}/{len(x)} (b {b}, c {c}: sign test {'yes' if b - c > need else 'no'}), "
              f"W {weighted(x, strata):.4f} (bootstrap 5th percentile of the gain {low:+.4f}: {'yes' if low > 0 else 'no'})")


if __name__ == "__main__":
    main()
