"""Reference verdicts for the text helpers, computed by CPython (the language upstream runs in).

Writes tests/fixtures/text_cases.json:
  "json":  [{"input": s, "output": json.dumps(json.loads(s), separators=(",", ":"),
             ensure_ascii=False)} or {"input": s, "error": true}] — what Python's decoder
           accepts must round-trip byte-identically; what it rejects must be refused.
  "json_refused_divergences": inputs Python accepts that the runtime refuses on purpose
           (lone UTF-16 surrogates: not representable in UTF-8).
  "utf8_replace": [{"bytes": hex, "text": bytes.decode("utf-8", "replace")}] — the lossy
           decoding upstream's tokenizer applies to byte pieces.

    /work/venvs/v3/bin/python tools/reference/text_cases.py [--out tests/fixtures]
"""
import argparse
import json
import os
import random
import struct


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def verdict(text):
    try:
        return {"input": text, "output": compact(json.loads(text))}
    except (ValueError, RecursionError):
        return {"input": text, "error": True}


def json_inputs(rng):
    fixed = [
        '{"b":1,"a":[1,2.5,-3e-7,"x"],"c":{"d":null,"e":true,"f":false}}',
        ' \t\r\n[ 1 , 2 ]\n ', '"\\u00e9\\u00E9\\/\\b\\f\\n\\r\\t\\"\\\\"', '"\\ud83d\\ude00"',
        '"é😀\u2028\x7f"', '{"a":1,"a":2}', '{"":0}', '[]', '{}', '""', '0', '-0', '-0.0',
        '1E+2', '1e-2', '1.0e0', '123456789012345678901234567890', '1' * 4300, '1' * 4301,
        '-' + '9' * 4300, '0.' + '1' * 400, '1e400', '-1e400', '1e-400', 'NaN', 'Infinity',
        '-Infinity', 'nan', 'infinity', '-NaN',
        # malformed
        '', ' ', '[', ']', '{', '[1,]', '[,1]', '{"a":1,}', '{"a"}', '{a:1}', "{'a':1}", '[1 2]',
        '"abc', '"\\q"', '"\\u12"', '"\\u12x4"', '"\x01"', '"\n"', '01', '00', '1.', '.1', '1e',
        '1e+', '+1', '--1', '0x10', 'tru', 'nul', 'True', 'None', '[1]x', '{}{}', '\ufeff[]',
        '[' * 50 + ']' * 49, '[' * 3000 + ']' * 3000, '[\u00a0]', '[1,\u3000 2]',
    ]
    # Shortest-repr agreement on many doubles: random bit patterns and short decimals,
    # written in a non-canonical form so the output really is re-rendered.
    floats = []
    while len(floats) < 3000:
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if x == x and abs(x) != float("inf"):
            floats.append(x)
    for _ in range(1000):
        floats.append(rng.randint(-10**6, 10**6) / 10 ** rng.randint(0, 12))
        floats.append(float(f"{rng.randint(1, 99)}e{rng.randint(-30, 30)}"))
    for p in range(-330, 310):
        floats.append(float(f"1e{p}"))
        floats.append(float(f"9.999999999999999e{p}"))
    number_docs = ["[" + ",".join("%.17e" % x for x in floats[i:i + 50]) + "]"
                   for i in range(0, len(floats), 50)]
    return fixed + number_docs


def utf8_cases():
    seqs = [
        b"", b"abc", b"\xc3\xa9", b"\xc3", b"\xe2\x82", b"\xe2\x82\x41", b"\xe2\x82\xac",
        b"\xf0\x9f\x98\x80", b"\xf0\x9f\x98", b"\xf0\x80\x80", b"\xf0\x90\x80", b"\xf4\x90\x80\x80",
        b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xe0\xa0\x80",
        b"\xff", b"\xfe\xff", b"\x80", b"\x80\x80\x80", b"a\xffb", b"\xf8\x88\x80\x80\x80",
        b"\xf0\x9f\x98\x80\x80", b"\xe2\x96\x81x", b"\xe2\x82\xe2\x82\xac", b"\xf1\x80\x80\xe1\x80\xc2",
        b"\xdf", b"\xef\xbf\xbd", b"\xf4\x8f\xbf\xbf", b"\xf5",
    ]
    return [{"bytes": s.hex(), "text": s.decode("utf-8", "replace")} for s in seqs]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures"))
    args = parser.parse_args()
    rng = random.Random(20240607)
    data = {
        "generator": "tools/reference/text_cases.py",
        "json": [verdict(s) for s in json_inputs(rng)],
        "json_refused_divergences": ['"\\ud800"', '"\\udc00"', '"\\ud800\\u0041"', '"\\ud800x"'],
        "utf8_replace": utf8_cases(),
    }
    for s in data["json_refused_divergences"]:
        assert "output" in verdict(s), s  # Python does accept these
    path = os.path.join(args.out, "text_cases.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print(f"wrote {len(data['json'])} JSON and {len(data['utf8_replace'])} UTF-8 cases to {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
