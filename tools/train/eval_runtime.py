"""Acceptance pass rates of a `.cact` through the project's own CLI (the final figure).

Runs `needle run --model F --query Q --tools T.json --system S --json` for every case
of tests/fixtures/acceptance/*.json and scores as upstream's harness does
(scoring.py). Standard library only: no jax needed.

`--examples FILE.jsonl` scores the generator's own examples instead (each with the tools it
shows and its target calls), to tell how a model does on data of the kind it was trained on.

Usage: python3 tools/train/eval_runtime.py [--cli "target/release/needle"]
       [--model www/models/default.cact] [--extra "--kv f32"] [--examples FILE.jsonl [--limit N]]
       [--verbose] [--json OUT]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import scoring  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def calls_of(stdout):
    """Calls from the CLI's --json object: `function_calls` (a list, or JSON text of one);
    failing that, the <tool_call> block of the raw `text`. A parse error is no call."""
    try:
        out = json.loads(stdout)
    except json.JSONDecodeError:
        return scoring.calls_from_text(stdout), stdout
    calls = out.get("function_calls")
    if isinstance(calls, str):
        try:
            calls = json.loads(calls) if calls.strip() else []
        except json.JSONDecodeError:
            calls = None
    if calls is None:
        calls = scoring.calls_from_text(out.get("text") or "")
    if not isinstance(calls, list):
        calls = []
    calls = [{"name": c.get("name"), "arguments": c.get("arguments") or {}}
             for c in calls if isinstance(c, dict)]
    return calls, out.get("text", stdout)


def cases(args, tmp):
    """(env, category, query, tools file, system, wanted calls) of each case to run."""
    def tools_file(name, tools):
        path = os.path.join(tmp, name + ".json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(tools, handle, ensure_ascii=False)
        return path

    if args.examples:
        with open(args.examples, encoding="utf-8") as handle:
            for n, line in enumerate(handle):
                if args.limit and n >= args.limit:
                    break
                ex = json.loads(line)
                yield (ex["env"], ex["category"], ex["query"], tools_file(f"example{n}", ex["tools"]),
                       ex["system"], json.loads(ex["answers"]))
        return
    for env, suite in scoring.load_suites(ROOT).items():
        path = tools_file(env, suite["tools"])
        for case in suite["cases"]:
            yield env, case["category"], case["query"], path, suite["system"], case["calls"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cli", default=os.path.join(ROOT, "target", "release", "needle"),
                        help="command that starts the CLI (split like a shell would)")
    parser.add_argument("--model", default=os.path.join(ROOT, "www", "models", "default.cact"))
    parser.add_argument("--extra", default="", help="extra arguments for `needle run`")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--verbose", action="store_true", help="print every failing case")
    parser.add_argument("--json", help="write per-case results here")
    parser.add_argument("--examples", help="score these generator examples (jsonl) instead of the suite")
    parser.add_argument("--limit", type=int, default=0, help="with --examples: only the first N")
    args = parser.parse_args()

    results, records, errors = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for env, category, query, tools_path, system, want in cases(args, tmp):
            command = shlex.split(args.cli) + [
                "run", "--model", args.model, "--query", query, "--tools", tools_path,
                "--system", system, "--json"] + shlex.split(args.extra)
            proc = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            if proc.returncode != 0:
                errors += 1
                got, text = [], proc.stderr.strip()
            else:
                got, text = calls_of(proc.stdout)
            ok = scoring.passed(got, want)
            results.append((env, category, ok))
            records.append({"env": env, "category": category, "ok": ok, "output": text})
            if args.verbose and not ok:
                print(f"FAIL {env} [{category}] {query}\n  want {json.dumps(want)}"
                      f"\n  got  {json.dumps(got)}  ({text!r})")
    print(f"model {args.model}  cli {args.cli}  {errors} CLI errors")
    scoring.report(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(records, handle, ensure_ascii=False, indent=1)
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
