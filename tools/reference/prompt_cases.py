"""Prompt-rendering reference cases, rendered by upstream's own code.

Writes tests/fixtures/prompt_cases.json: {"cases": [{"name", "query", "tools_json", "system",
"flatten", "renderer", "rendered"}]}. The Rust side parses `tools_json` (empty text = no tool
list), applies `flat_tools` first when `flatten` is true, and must produce `rendered` byte for
byte. `renderer` names the upstream function: `build_prompt` (system null) or `render_example`.

The tools upstream renders are `json.loads(tools_json)`: the Python objects a caller would
hand it, so non-compact input text checks the re-serialisation. Every case is rendered again
by the Needle 2 package (cactus-needle 2.0.15, in its own venv) and must come out identical:
the prompt format is shared by both generations.

    /work/venvs/v3/bin/python tools/reference/prompt_cases.py [--out tests/fixtures]
"""
import argparse
import json
import os
import subprocess
import sys

os.environ["NEEDLE_TELEMETRY"] = "0"

V2_PYTHON = "/work/venvs/v2/bin/python"

# Runs inside either venv: renders every case with that package's functions.
RENDER_SNIPPET = r"""
import json, sys
from needle.model.run import build_prompt
from needle.model.finetune import render_example
out = []
for case in json.load(sys.stdin):
    tools = json.loads(case["tools_json"]) if case["tools_json"] != "" else None
    if case["flatten"]:
        tools = [t["function"] if isinstance(t, dict) and t.get("type") == "function" and "function" in t
                 else t for t in tools]
    if case["system"] is None:
        out.append(build_prompt(case["query"], tools))
    else:
        example = {"query": case["query"], "system": case["system"]}
        if tools is not None or case["tools_json"] != "":
            example["tools"] = tools
        out.append(render_example(example)[0])
json.dump(out, sys.stdout, ensure_ascii=False)
"""

PY_WHITESPACE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())


def environment_tools():
    """The hand-curated environments' schemas and system prompts (real upstream tools)."""
    from needle.environments import ENVIRONMENTS
    out = []
    for name, module in sorted(ENVIRONMENTS.items()):
        schemas = [t._needle_tool for t in module.TOOLS]
        out.append((name, schemas, module.SYSTEM, module.TEST_CASES[0]["query"]))
    return out


def cases():
    lights = {"name": "set_lights", "description": "Turn lights on or off.",
              "parameters": {"type": "object", "properties": {
                  "room": {"type": "string", "enum": ["kitchen", "bedroom"]},
                  "on": {"type": "boolean"}}, "required": ["room", "on"]}}
    out = []

    def add(name, query, tools_json, system=None, flatten=False):
        out.append({"name": name, "query": query, "tools_json": tools_json, "system": system,
                    "flatten": flatten})

    for env, schemas, system, query in environment_tools():
        add(f"env_{env}", query, json.dumps(schemas), system)
        add(f"env_{env}_no_system", query, json.dumps(schemas, indent=1, ensure_ascii=False))

    add("bare_query_without_tools", "  what time is it?  ", "[]")
    add("bare_query_absent_tools", "hello", "")
    add("empty_object_tools_are_falsy", "hello", "{}")
    add("system_forces_template_with_empty_tools", "hello", "[]", "be brief")
    add("system_forces_template_with_absent_tools", "hello", "", "be brief")
    add("system_null_tools", "hello", "null", "be brief")
    add("blank_system_is_dropped", "hi", json.dumps([lights]), " \n\t ")
    add("system_python_whitespace_stripped", "hi", json.dumps([lights]),
        PY_WHITESPACE + "keep\x1c inner\u3000space" + PY_WHITESPACE)
    add("system_non_whitespace_edges_kept", "hi", json.dumps([lights]), "\u200bzero-width\u200b")
    add("system_multiline", "hi", json.dumps([lights]), "line one\nline two\n\nline four")
    add("non_ascii", "Réglez la lumière à 50 % — 日本語 😀 ñ",
        json.dumps([{"name": "régler", "description": "Lumière 💡 «salon» — 東京",
                     "parameters": {"type": "object", "properties": {
                         "pièce": {"type": "string", "enum": ["séjour", "cuisine", "寝室"]}}}}]))
    add("non_ascii_escaped_input", "q",
        '[{"name":"caf\\u00e9","description":"\\ud83d\\ude00 \\u65e5\\u672c \\u00e9"}]')
    add("string_escapes", "say \"hi\"\\ now\n\ttab",
        json.dumps([{"name": "echo", "description": "quote \" backslash \\ slash / nl \n cr \r tab \t "
                     "bs \b ff \f nul \x00 unit \x1f del \x7f ls \u2028 ps \u2029 nbsp \xa0"}]))
    add("openai_style_rendered_as_given", "turn on the kitchen lights",
        json.dumps([{"type": "function", "function": lights}]))
    add("openai_style_flattened", "turn on the kitchen lights",
        json.dumps([{"type": "function", "function": lights}, {"name": "flat_one"}]), flatten=True)
    add("openai_style_flattened_with_system", "turn on the kitchen lights",
        json.dumps([{"type": "function", "function": lights}]), "sys", flatten=True)
    add("nested_schema", "book it",
        json.dumps([{"name": "book", "parameters": {"type": "object", "properties": {
            "guests": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
                "name": {"type": "string"},
                "age": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "default": None},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}}},
                "required": ["name"]}},
            "when": {"type": "object", "properties": {"start": {"type": "string", "format": "date-time"},
                                                         "nights": {"type": "integer", "maximum": 30}}}},
            "$defs": {"Tag": {"type": "string", "enum": ["vip", "child", "pet"]}},
            "required": ["guests"], "additionalProperties": False}}]))
    add("numbers", "n",
        '[{"name":"n","parameters":{"min":0.5,"tiny":1e-7,"small":0.0001,"big":1e21,"f":100.0,'
        '"e16":1E16,"e15":1e15,"negzero":-0.0,"negzero_int":-0,"int":12345678901234567890123,'
        '"neg":-17,"exp_int":5e2,"frac":3.14159265358979323846,"third":0.333333333333333333333,'
        '"max":1.7976931348623157e308,"min":5e-324,"over":1e400,"nan":NaN,"inf":-Infinity,'
        '"t":true,"f2":false,"z":null}}]')
    add("duplicate_keys_first_position_last_value", "q",
        '[{"name":"first","description":"d","name":"second","parameters":{}}]')
    add("whitespace_heavy_input", "q",
        '  [\n\t{ "name" :\r\n "spaced" ,\t"parameters" : { "type" : "object" } } ]  ')
    add("query_with_markers_verbatim", "<tool_call>[]</tool_call><|im_end|>\n<|im_start|>system",
        json.dumps([lights]))
    add("query_untouched_whitespace", "\n  padded query \t\n", json.dumps([lights]), "s")
    add("tools_as_object_not_list", "q", json.dumps({"name": "solo", "parameters": {}}))
    add("tools_as_string_value", "q", json.dumps("raw string tools"))
    add("empty_query", "", json.dumps([lights]))
    return out


def render_with(python, items):
    result = subprocess.run([python, "-c", RENDER_SNIPPET], input=json.dumps(items),
                            capture_output=True, text=True, check=True,
                            env={**os.environ, "NEEDLE_TELEMETRY": "0"})
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures"))
    args = parser.parse_args()
    items = cases()
    v3 = render_with(sys.executable, items)
    v2 = render_with(V2_PYTHON, items)
    for item, a, b in zip(items, v3, v2):
        if a != b:
            raise SystemExit(f"Needle 2 and 3 render {item['name']} differently:\n{a!r}\n{b!r}")
        item["renderer"] = "build_prompt" if item["system"] is None else "render_example"
        item["rendered"] = a
    path = os.path.join(args.out, "prompt_cases.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"generator": "tools/reference/prompt_cases.py", "cases": items}, f,
                  ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(items)} cases to {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
