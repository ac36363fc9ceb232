"""Acceptance scoring as upstream's `environments/_harness.run_tests` does it:
calls compared as an order-insensitive multiset, strings case-folded, integral
floats equal to ints. Shared by both evaluators."""
import json
import os
from collections import defaultdict

ENVS = ("smart_home", "media_player", "kitchen_appliance", "productivity", "wearable", "data_capture")
CATEGORIES = ("positive", "parallel", "missing", "irrelevant", "negation", "invalid")


def fold(value):
    if isinstance(value, str):
        return value.casefold()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: fold(v) for k, v in value.items()}
    if isinstance(value, list):
        return [fold(v) for v in value]
    return value


def key(call):
    return json.dumps(fold(call), sort_keys=True)


def calls_from_text(text):
    """The calls in a completion: the JSON list inside <tool_call>...</tool_call>; no
    block or an unparseable one counts as no call (what a refusal looks like)."""
    if "<tool_call>" not in text:
        return []
    body = text.split("<tool_call>", 1)[1].split("</tool_call>", 1)[0]
    try:
        calls = json.loads(body)
    except json.JSONDecodeError:
        return []
    if not isinstance(calls, list):
        return []
    return [{"name": c.get("name"), "arguments": c.get("arguments") or {}}
            for c in calls if isinstance(c, dict)]


def passed(got, want):
    return sorted(key(c) for c in got) == sorted(key(c) for c in want)


def load_suites(root):
    base = os.path.join(root, "tests", "fixtures", "acceptance")
    return {env: json.load(open(os.path.join(base, env + ".json"), encoding="utf-8")) for env in ENVS}


def report(results):
    """results: list of (env, category, ok). Prints a per-environment, per-category table."""
    table = defaultdict(lambda: [0, 0])
    for env, category, ok in results:
        for k in ((env, category), (env, "all"), ("ALL", category), ("ALL", "all")):
            table[k][0] += ok
            table[k][1] += 1
    cols = CATEGORIES + ("all",)
    lines = ["| env | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for env in ENVS + ("ALL",):
        cells = []
        for c in cols:
            n, d = table[(env, c)]
            cells.append(f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-")
        lines.append(f"| {env} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    print(text)
    return text
