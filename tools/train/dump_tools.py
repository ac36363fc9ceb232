"""Dump upstream's six tool environments to JSON, using upstream's own schema machinery.

Writes, relative to the repository root:
  www/presets/<env>.json             {"name", "system", "tools"}  (demo page presets)
  tests/fixtures/acceptance/<env>.json {"name", "system", "tools", "cases"}  (held-out suite)

The acceptance cases are written without being printed or read by any other script of
this directory except the evaluators: the generator never sees them.
"""
import argparse
import json
import os

from needle import environments

NAMES = ("smart_home", "media_player", "kitchen_appliance", "productivity", "wearable",
         "data_capture")


def tool_schemas(module):
    # `needle.tool` attaches the schema the engine itself serialises into the prompt.
    return [fn._needle_tool for fn in module.TOOLS]


def catalogue():
    """{env: {"system", "tools"}} for the six environments, in upstream's tool order."""
    out = {}
    for name in NAMES:
        module = getattr(environments, name)
        out[name] = {"system": module.SYSTEM, "tools": tool_schemas(module)}
    return out


def _write(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, ensure_ascii=False, indent=1)
        handle.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    args = parser.parse_args()
    for name, env in catalogue().items():
        module = getattr(environments, name)
        _write(os.path.join(args.root, "www", "presets", name + ".json"),
               {"name": name, "system": env["system"], "tools": env["tools"]})
        cases = [{"query": c["query"], "calls": c["calls"], "category": c["category"],
                  "critical": bool(c.get("critical", False))} for c in module.TEST_CASES]
        _write(os.path.join(args.root, "tests", "fixtures", "acceptance", name + ".json"),
               {"name": name, "system": env["system"], "tools": env["tools"], "cases": cases})
        print(f"{name}: {len(env['tools'])} tools, {len(cases)} acceptance cases")


if __name__ == "__main__":
    main()
