"""Label the model's own answers: run generator examples through the project's CLI and keep,
per example and decoding mode, the exchange the confidence head reads (prompt ids + generated
ids), whether the answer is right (upstream's harness scoring) and the confidence the runtime
reported (null without a head). Standard library only.

Usage: python3 tools/train/label_runs.py (--examples A.jsonl [B.jsonl ...] | --suite) --out runs.jsonl
       [--cli target/release/needle] [--model www/models/default.cact]
       [--modes "" "--extractive --value-search"] [--jobs 2]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import calibration  # noqa: E402
import scoring  # noqa: E402
from eval_runtime import ROOT, calls_of  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", nargs="+", help="generator examples (jsonl)")
    parser.add_argument("--suite", action="store_true", help="the held-out acceptance suite instead")
    parser.add_argument("--out", required=True)
    parser.add_argument("--cli", default=os.path.join(ROOT, "target", "release", "needle"))
    parser.add_argument("--model", default=os.path.join(ROOT, "www", "models", "default.cact"))
    parser.add_argument("--modes", nargs="+", default=["", "--extractive --value-search"],
                        help="extra `needle run` arguments, one decoding mode each")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.suite:
        examples = [{"env": env, "category": case["category"], "query": case["query"],
                     "tools": suite["tools"], "system": suite["system"],
                     "answers": json.dumps(case["calls"])}
                    for env, suite in scoring.load_suites(ROOT).items() for case in suite["cases"]]
    elif args.examples:
        # The suite stays held out from anything trained on these labels, even a query the
        # generator happens to share with it.
        held = {case["query"].casefold() for suite in scoring.load_suites(ROOT).values()
                for case in suite["cases"]}
        examples = [json.loads(line) for path in args.examples for line in open(path, encoding="utf-8")]
        kept = [ex for ex in examples if ex["query"].casefold() not in held]
        print(f"{len(examples) - len(kept)} examples skipped: their query is an acceptance case")
        examples = kept
    else:
        parser.error("--examples or --suite is required")

    with tempfile.TemporaryDirectory() as tmp:
        def run(item):
            n, ex = item
            tools = os.path.join(tmp, f"{n}.json")
            with open(tools, "w", encoding="utf-8") as handle:
                json.dump(ex["tools"], handle, ensure_ascii=False)
            rows = []
            for mode in args.modes:
                command = shlex.split(args.cli) + [
                    "run", "--model", args.model, "--query", ex["query"], "--tools", tools,
                    "--system", ex["system"], "--json"] + shlex.split(mode)
                proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
                if proc.returncode != 0:
                    raise SystemExit(f"CLI failed on example {n}: {proc.stderr.strip()}")
                out = json.loads(proc.stdout)
                got, _ = calls_of(proc.stdout)
                rows.append({"env": ex["env"], "category": ex["category"], "mode": mode,
                             "ids": out["prompt_ids"] + out["tokens"],
                             "ok": scoring.passed(got, json.loads(ex["answers"])),
                             "confidence": out.get("confidence")})
            return rows

        results = []
        with ThreadPoolExecutor(args.jobs) as pool, open(args.out, "w", encoding="utf-8") as out:
            for rows in pool.map(run, enumerate(examples)):
                for row in rows:
                    out.write(json.dumps(row) + "\n")
                results.extend(rows)
    print(f"{len(examples)} examples x {len(args.modes)} modes -> {args.out}")
    for mode in args.modes:
        rows = [r for r in results if r["mode"] == mode and r["confidence"] is not None]
        if rows:
            print(f"mode {mode or '(greedy)'!r}: " + calibration.summary(
                [r["confidence"] for r in rows], [r["ok"] for r in rows]))


if __name__ == "__main__":
    main()
