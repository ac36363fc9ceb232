"""Writes the Needle 3 reference fixtures (tests/fixtures/v3/, tokenizer corpus).

Run with the pinned venv (see README.md):
    tools/reference/.venv-v3/bin/python tools/reference/v3_fixtures.py [--out tests/fixtures]

Everything comes from upstream's own code (cactus-needle 3.2.8): its model,
exporter, reader, prompt renderers and tokenizer reference. What this file adds
is the choice of geometries and prompts, moving the weights off upstream's
degenerate init, other CQ widths than 4, and the bookkeeping of case.json.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

jax = common.setup_jax()
import jax.numpy as jnp  # noqa: E402

from needle.model import architecture as A  # noqa: E402
from needle.model import export as E  # noqa: E402
from needle.model import finetune as F  # noqa: E402
from needle.model import quantize as Q  # noqa: E402
from needle.model import run as R  # noqa: E402
from needle.model import tokenizer as T  # noqa: E402

import v3_model as M  # noqa: E402

# Deploy numerics read this module global at trace time: set it before any tracing.
Q.configure_deploy(act_bits=8, kv_bits=8)

GREEDY_STEPS = 32
SEED_TRIALS = 8
MIN_DISTINCT = 4
PREFIX_CAP = 16
PERTURB_SEEDS = (101, 102, 103)
TOKENIZER_VOCAB = 640
MODES = ("f32", "kv8", "deploy")
MODE_DTYPE = {"f32": "f32", "kv8": "f16", "deploy": "f16"}
CORPUS_CASE = "local_global_taps"

# ------------------------------------------------------- the kv8 reference
# kv8 = per-head A8 fake-quant of q, k and v only, nothing else: upstream's own
# query/KV quantisers forced on while quant=False leaves every other site exact.
_FORCE_QKV8 = [False]
_upstream_quant_query, _upstream_quant_kv = Q.maybe_quant_query, Q.maybe_quant_kv


def _quant_query(x, quant):
    return Q.a8_fake_quant_kv(x) if _FORCE_QKV8[0] else _upstream_quant_query(x, quant)


def _quant_kv(x, quant):
    return Q.a8_fake_quant_kv(x) if _FORCE_QKV8[0] else _upstream_quant_kv(x, quant)


Q.maybe_quant_query, Q.maybe_quant_kv = _quant_query, _quant_kv


class Runner:
    """Jitted full-sequence forwards of one model, one compilation per mode and shape."""

    def __init__(self, config):
        self.model = A.SimpleAttentionNetwork(config)
        self.fns = {}

    def _fn(self, mode):
        if mode not in self.fns:
            model = self.model

            def forward(params, tokens):
                _FORCE_QKV8[0] = mode == "kv8"      # read while tracing only
                try:
                    return model.apply({"params": params}, tokens, quant=(mode == "deploy"))
                finally:
                    _FORCE_QKV8[0] = False
            self.fns[mode] = jax.jit(forward)
        return self.fns[mode]

    def logits(self, params, tokens, mode):
        out = self._fn(mode)(params, jnp.asarray([tokens], jnp.int32))
        return np.asarray(out[0], np.float32)

    def greedy(self, params, prompt_ids, mode, steps=GREEDY_STEPS):
        """Upstream's greedy loop (a fixed PAD-filled buffer, one full forward per
        step), stopping after EOS. Returns greedy ids and the rows over
        prompt_ids ++ greedy (causal, so the PAD tail changes none of them)."""
        p = len(prompt_ids)
        buf = list(prompt_ids) + [T.PAD_ID] * steps
        out = []
        for k in range(steps):
            t = int(np.argmax(self.logits(params, buf, mode)[p - 1 + k]))
            out.append(t)
            buf[p + k] = t
            if t == T.EOS_ID:
                break
        rows = self.logits(params, buf, mode)[: p + len(out)]
        return out, rows, buf

    def measure(self, params, prompt_ids, mode):
        """Greedy decode, then its statistics against perturbed weights."""
        greedy, rows, buf = self.greedy(params, prompt_ids, mode)
        moved = [self.logits(common.perturb_tree(params, s), buf, mode)[: len(rows)]
                 for s in PERTURB_SEEDS]
        return common.mode_stats(rows, moved, len(prompt_ids), greedy, T.EOS_ID), rows


# ------------------------------------------------------------------ cases

def _tools(*names):
    by = {t["name"]: t for t in common.CORPUS_TOOLS}
    return [by[n] for n in names]


# Tool JSON exactly as a user would hand it over; upstream re-serialises it.
TOOLS_PRETTY = json.dumps(_tools("get_weather", "set_timer", "play_music"), indent=2,
                          ensure_ascii=False)
TOOLS_NON_ASCII = """[
  {"name": "régler_thermostat",
   "description": "Règle la température d'une pièce (°C) \\u2014 \\"confort\\" 🙂",
   "parameters": {"type": "object",
                  "required": ["pièce", "valeur"],
                  "properties": {"valeur": {"type": "number", "minimum": 5, "maximum": 30.5},
                                 "pièce": {"type": "string", "enum": ["salon", "cuisine", "chambre"]}}}},
  {"name": "allumer", "description": "Allume les lumières\\nd'une pièce",
   "parameters": {"type": "object", "properties": {"pièce": {"type": "string"},
                                                   "intensité": {"type": "integer", "default": null},
                                                   "clignoter": {"type": "boolean", "default": false}}}}
]"""

CASES = [
    {
        "name": "local_global_taps",
        "description": (
            "Sliding-window local layers (window 24) and global layers 1,3 with a prompt far longer "
            "than the window; QKV conv taps 3; one Engram site (layer 2, 97 slots); 4 mHC lanes; "
            "qk_head_dim 16 != v_head_dim 24; GQA 4/2; d_model 64 so every CQ row is padded to the "
            "128 group; CQ widths 4,3,2 cycling; all three probe heads; system prompt."),
        "seed": 11,
        "config": dict(vocab_size=TOKENIZER_VOCAB, d_model=64, num_heads=4, num_kv_heads=2,
                       num_layers=4, qk_head_dim=16, v_head_dim=24, max_seq_len=512,
                       global_layers=(1, 3), sliding_window=24, qkv_conv_taps=3,
                       engram_layers=(2,), engram_heads=1, engram_slots=97, mhc_lanes=4,
                       embedding_dim=32),
        "heads": ("embedding", "confidence", "router"),
        "group": 128,
        "widths": {"cycle": (4, 3, 2)},
        "prompt": {"query": "Make the living room warmer, 22 degrees please, and switch on the kitchen lights.",
                   "tools_json": json.dumps(_tools("set_temperature", "turn_on_lights"),
                                            separators=(",", ":")),
                   "system": "  You are a careful smart-home assistant.\nOnly call the tools you are given.\n",
                   "renderer": "render_example"},
    },
    {
        "name": "widths_sites_outvocab",
        "description": (
            "Every CQ width on logit-relevant matrices: embedding (tied head) 3-bit, the rest cycling "
            "1,2,3,ternary(5),4; three Engram sites (layers 0,2,4) with orders 2,3,4 (dilation 4); "
            "all layers global (sliding_window 0); no conv taps; 2 mHC lanes; d_model 96, not a power "
            "of two (hada_n 128); out_vocab 640 < vocab 704; no probe heads; pretty-printed tool JSON."),
        "seed": 22,
        "config": dict(vocab_size=TOKENIZER_VOCAB + 64, out_vocab=TOKENIZER_VOCAB, d_model=96,
                       num_heads=6, num_kv_heads=2, num_layers=5, qk_head_dim=16, v_head_dim=16,
                       max_seq_len=512, global_layers=(), sliding_window=0, qkv_conv_taps=0,
                       engram_orders=(2, 3, 4), engram_layers=(0, 2, 4), engram_heads=1,
                       engram_slots=128, mhc_lanes=2),
        "heads": (),
        "group": 128,
        "widths": {"cycle": (1, 2, 3, M.TERNARY, 4), "fixed": {"embedding": 3}},
        "prompt": {"query": "What's the weather in Zürich right now, in celsius?",
                   "tools_json": TOOLS_PRETTY, "system": None, "renderer": "build_prompt"},
    },
    {
        "name": "eos_confidence_rung",
        "description": (
            "Greedy ends with EOS (EOS row of the tied embedding adjusted); confidence head only, "
            "with 3 probes and 2 queries; 6 layers, globals 2,5, window 32, conv taps 3; two Engram "
            "sites (1,5) with 2 heads and engram_seed_heads 4 (61 slots); MQA 4/1 with qk 32 > v 16; "
            "rope_theta 10000; CQ group 64; widths 2,3,4,ternary like the published file; "
            "non-ASCII tool JSON; ladder rung of depth 3."),
        "seed": 33,
        "config": dict(vocab_size=TOKENIZER_VOCAB, d_model=128, num_heads=4, num_kv_heads=1,
                       num_layers=6, qk_head_dim=32, v_head_dim=16, max_seq_len=1024,
                       global_layers=(2, 5), sliding_window=32, qkv_conv_taps=3,
                       engram_layers=(1, 5), engram_heads=2, engram_seed_heads=4,
                       engram_slots=61, mhc_lanes=4, rope_theta=10000.0,
                       confidence_probes=3, confidence_queries=2),
        "heads": ("confidence",),
        "group": 64,
        "widths": {"cycle": (2, 3, 4, M.TERNARY), "fixed": {"embedding": 4}},
        "eos": True,
        "rung_depth": 3,
        "prompt": {"query": "Mets le salon à 21,5 °C 🙂 puis allume la cuisine",
                   "tools_json": TOOLS_NON_ASCII, "system": None, "renderer": "build_prompt"},
    },
    {
        "name": "no_engram_empty_tools",
        "description": (
            "No Engram sites; 2 layers, both global without a window; conv taps 2; 3 mHC lanes; MHA "
            "2/2 with 32-wide heads; upstream's unpatched 4-bit writer; embedding and router heads "
            "(manifest codes 1,3; embedding head with 2 probes, 3 queries, 16 dims); empty tool list, "
            "so build_prompt returns the bare query."),
        "seed": 44,
        "config": dict(vocab_size=TOKENIZER_VOCAB, d_model=64, num_heads=2, num_kv_heads=2,
                       num_layers=2, qk_head_dim=32, v_head_dim=32, max_seq_len=256,
                       global_layers=(), sliding_window=0, qkv_conv_taps=2, engram_layers=(),
                       mhc_lanes=3, embedding_probes=2, embedding_queries=3, embedding_dim=16),
        "heads": ("embedding", "router"),
        "group": 128,
        "widths": None,
        "prompt": {"query": "Hello there!  What can you do for me today?\tAnything fun?",
                   "tools_json": "[]", "system": None, "renderer": "build_prompt"},
    },
]


def render(prompt):
    tools = json.loads(prompt["tools_json"])
    if prompt["renderer"] == "build_prompt":
        assert prompt["system"] is None
        return R.build_prompt(prompt["query"], tools)
    example = {"query": prompt["query"], "tools": tools, "system": prompt["system"]}
    return F.render_example(example)[0]


# ------------------------------------------------------------------ steps

def export_and_read(case, params, config, path, blob):
    widths = case["widths"]
    plan = M.WidthPlan(widths["cycle"], widths.get("fixed")) if widths else None
    names = M.write_container(params, config, path, blob, group=case["group"], plan=plan)
    header, ref_params = M.read_params(path, names, params, config)
    return names, header, ref_params


def choose_eos(rows, prompt_len, greedy):
    """Pick (token, scale) so that EOS row = scale * row(token) makes greedy stop
    between steps 10 and 28 with the widest margins: logit(EOS) = scale * logit(token)."""
    steps = rows[prompt_len - 1: prompt_len - 1 + len(greedy)]
    best = None
    for k in range(10, min(29, len(greedy))):
        t = greedy[k]
        for scale in (1.1, 1.2, 1.35, 1.5, 1.75, 2.0):
            eos = scale * steps[:, t]
            fires = np.nonzero(eos > steps.max(axis=-1))[0]
            if len(fires) == 0 or fires[0] != k:
                continue
            with_eos = np.concatenate([steps[: k + 1], eos[: k + 1, None]], axis=-1)
            margin = common.top2_margins(with_eos).min()
            if best is None or margin > best[0]:
                best = (margin, t, scale, k)
    if best is None:
        raise RuntimeError("no token/scale makes greedy reach EOS")
    return best


def head_outputs(model, params, tokens, present):
    out = {}
    for head in ("embedding", "confidence", "router"):
        if head not in present:
            continue
        method = M.HEAD_METHODS[head]
        fn = jax.jit(lambda p, t, m=method: model.apply({"params": p}, t, method=m))
        value = np.asarray(fn(params, jnp.asarray([tokens], jnp.int32)), np.float32)
        out[head] = {"method": f"SimpleAttentionNetwork.{method}(tokens, quant=False)",
                     "tokens": [int(t) for t in tokens], "shape": list(value.shape),
                     "output": common.f32_list(value)}
    out["absent_heads"] = [h for h in ("embedding", "confidence", "router") if h not in present]
    return out


def rung_record(config, params, depth, prompt_ids):
    """f32 greedy of upstream's depth-`depth` ladder rung (sliced parameters, renumbered config)."""
    rconfig = A.ladder_config(config, depth)
    stats, _ = Runner(rconfig).measure(A.ladder_slice(params, config, depth), prompt_ids, "f32")
    return {"depth": depth, "layer_indices": list(A.ladder_layer_indices(config, depth)),
            "rung_global_layers": list(rconfig.global_layers),
            "rung_engram_layers": list(rconfig.engram_layers),
            "mode": "f32", **stats}


def pick_seed(case, config, runner, prompt_ids, path, blob, clock):
    """Try SEED_TRIALS seeds. Keep one whose f32 greedy output varies (at least
    MIN_DISTINCT ids) and, for an EOS case, can be steered to EOS; among those
    the longest kv8 and deploy robust prefixes (each capped at PREFIX_CAP so
    that neither mode alone decides)."""
    init = M.initializer(config, case["heads"])
    best = None
    for seed in range(case["seed"], case["seed"] + SEED_TRIALS):
        params = M.undegenerate(init(seed), seed)
        _, _, ref = export_and_read(case, params, config, path, blob)
        measured = {m: runner.measure(ref, prompt_ids, m) for m in MODES}
        stats = {m: measured[m][0] for m in MODES}
        distinct = len(set(stats["f32"]["greedy"]))
        usable = distinct >= MIN_DISTINCT
        if usable and case.get("eos"):
            try:
                choose_eos(measured["f32"][1], len(prompt_ids), stats["f32"]["greedy"])
            except RuntimeError:
                usable = False
        prefixes = sum(min(stats[m]["robust_prefix"], PREFIX_CAP) for m in ("kv8", "deploy"))
        score = (usable, prefixes, distinct)
        clock(f"{case['name']}: seed {seed}: {distinct} distinct, robust prefixes "
              + " ".join(f"{m} {stats[m]['robust_prefix']}" for m in MODES))
        if best is None or score > best[0]:
            best = (score, seed, params)
    return best[1], best[2]


def build_case(case, sp, blob, out_root, clock):
    name = case["name"]
    folder = os.path.join(out_root, "v3", name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    config = M.make_config(case["config"])
    path = os.path.join(folder, "model.cact")

    rendered = render(case["prompt"])
    prompt_ids = [T.BOS_ID] + sp.Encode(rendered, out_type=int)
    runner = Runner(config)
    seed, params = pick_seed(case, config, runner, prompt_ids, path, blob, clock)
    names, header, ref = export_and_read(case, params, config, path, blob)
    assert prompt_ids[1:] == E.RefTokenizer.from_cact(path).encode(rendered), \
        "RefTokenizer != sentencepiece on the prompt"

    eos_note = None
    if case.get("eos"):
        greedy, rows, _ = runner.greedy(ref, prompt_ids, "f32")
        margin, token, scale, step = choose_eos(rows, len(prompt_ids), greedy)
        emb = params["embedding"]["embedding"].copy()
        emb[T.EOS_ID] = scale * emb[token]
        params["embedding"]["embedding"] = emb
        names, header, ref = export_and_read(case, params, config, path, blob)
        eos_note = {"row_copied_from": int(token), "scale": scale, "expected_step": int(step)}
        clock(f"{name}: EOS row = {scale} x row {token}, aimed at step {step}")

    modes = {}
    for mode in MODES:
        stats, rows = runner.measure(ref, prompt_ids, mode)
        logits = common.write_logits(folder, mode, rows, MODE_DTYPE[mode])
        modes[mode] = {"greedy": stats.pop("greedy"), "ended_with_eos": stats.pop("ended_with_eos"),
                       "logits": logits, **stats}
        m = modes[mode]
        clock(f"{name}: {mode} greedy {len(m['greedy'])} eos={m['ended_with_eos']} "
              f"tol={m['tolerance']:.2e} robust={m['robust_prefix']}")
    if case.get("eos"):
        assert modes["f32"]["ended_with_eos"], "f32 greedy did not reach EOS"

    record = {
        "generation": 3,
        "name": name,
        "description": case["description"],
        "seed": seed,
        "upstream_config": {**{k: list(v) if isinstance(v, tuple) else v
                               for k, v in case["config"].items()},
                            "dtype": "float32", "remat": False},
        "geometry": {k: (common.f32_list(v) if k == "codebook" else
                         list(v) if isinstance(v, tuple) else
                         float(v) if isinstance(v, float) else v)
                     for k, v in header.items()},
        "tensors": [{"name": n, "dtype": r["dtype"], "shape": r["shape"], "bits": r["bits"],
                     "group": r["group"]}
                    for n, r in zip(names, M.directory(path))],
        "prompt": {**{k: case["prompt"][k] for k in ("query", "tools_json", "system")},
                   "rendered": rendered, "renderer": case["prompt"]["renderer"]},
        "prompt_ids": prompt_ids,
        "modes": modes,
    }
    if eos_note:
        record["eos_adjustment"] = eos_note
    if case["heads"]:
        record["heads"] = head_outputs(runner.model, ref, prompt_ids, case["heads"])
        clock(f"{name}: heads {list(case['heads'])}")
    else:
        record["heads"] = {"absent_heads": ["embedding", "confidence", "router"]}
    if case.get("rung_depth"):
        record["rungs"] = [rung_record(config, ref, case["rung_depth"], prompt_ids)]
        clock(f"{name}: rung depth {case['rung_depth']} robust={record['rungs'][0]['robust_prefix']}")
    common.write_json(os.path.join(folder, "case.json"), record)
    return record


def tokenizer_corpus(sp, out_root):
    path = f"v3/{CORPUS_CASE}/model.cact"
    ref = E.RefTokenizer.from_cact(os.path.join(out_root, path))
    cases, mismatches = common.check_tokenizer(sp, ref, common.TRICKY_STRINGS)
    common.write_json(os.path.join(out_root, "tokenizer", "v3_corpus.json"),
                      {"container": path, "cases": cases})
    return mismatches


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "fixtures"))
    ap.add_argument("--only", nargs="*", help="case names to rebuild")
    args = ap.parse_args()
    out_root = os.path.abspath(args.out)
    clock = common.Clock()

    corpus = common.tokenizer_corpus(F.render_example)
    sp = common.load_sentencepiece(common.train_sentencepiece(corpus, TOKENIZER_VOCAB, T.CHAT_MARKERS))
    blob = M.tokenizer_blob(sp)
    ref = E.RefTokenizer(E.parse_tokenizer_blob(blob))
    _, mismatches = common.check_tokenizer(sp, ref, corpus)
    assert not mismatches, "RefTokenizer and sentencepiece disagree on the training corpus"
    clock(f"tokenizer: {sp.GetPieceSize()} pieces")

    widths = set()
    for case in CASES:
        if args.only and case["name"] not in args.only:
            continue
        record = build_case(case, sp, blob, out_root, clock)
        widths |= {t["bits"] for t in record["tensors"] if t["dtype"] == E.CQ}
    if not args.only:
        assert widths == set(M.WIDTHS), f"CQ widths covered: {sorted(widths)}"
    mismatches = []
    if os.path.exists(os.path.join(out_root, "v3", CORPUS_CASE, "model.cact")):
        mismatches = tokenizer_corpus(sp, out_root)
    for m in mismatches:
        print(f"  tokenizer: RefTokenizer differs from sentencepiece on {m['text']!r}")
    total = common.folder_bytes(os.path.join(out_root, "v3"))
    clock(f"done: {total / 1e6:.2f} MB of v3 fixtures")


if __name__ == "__main__":
    main()
