"""Writes a random-weight Needle 2 container at the shipped geometry, for benchmarks.

    tools/reference/.venv-v2/bin/python tools/reference/shipped_geometry_v2.py
        [--widths 4|mixed] [--heads all|confidence|none] [--out bench/needle2-shipped-w4.cact]

Never commit the output (bench/ is ignored); it regenerates byte-identically from
the seed. The geometry is upstream 2.0.15's "needle" preset on the TransformerConfig
defaults: vocab 8192, d_model 768, 27 layers, 12 query / 6 KV heads (head_dim 64,
hada_n 1024), 4 mHC lanes, Engram orders (2, 3) x 3 heads (6 tables, sub_dim 128,
8192 slots) at sites 2 and 15, contrastive dim 128, rope_theta 1e5, max_seq_len 2048.
The header's kv_window is what upstream's own exporter CLI writes,
`effective_kv_window(config)` (480 here). Weights are moved off upstream's init
exactly as for the fixtures (v2_fixtures.perturb_params).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import v2_fixtures as V  # noqa: E402  (sets up jax and upstream's deploy globals)

import numpy as np  # noqa: E402
from needle.model import architecture as A  # noqa: E402
from needle.model import tokenizer as T  # noqa: E402

SHIPPED = dict(A.PRESETS["needle"], vocab_size=8192, max_seq_len=2048, contrastive_dim=128,
               engram_slots=8192, mhc_lanes=4, rope_theta=100000.0)
HEADS = {"all": ("contrastive_head", "confidence_head"), "confidence": ("confidence_head",),
         "none": ()}
# "mixed" exercises every width the v2 exporter's bits map accepts (2, 3, 4, ternary).
WIDTHS = {"4": None,
          "mixed": ("default=3,embedding=4,attn.k_proj=4,attn.v_proj=4,attn.gate_proj=2,"
                    "attn.out_proj=1.58,mhc_phi=4,engram0.tables=2,engram1.tables=2")}


def pseudo_words(count, seed=0):
    """Distinct pronounceable words, so BPE has enough merges for 8192 pieces."""
    rng = np.random.RandomState(seed)
    onsets = list("bcdfghjklmnprstvwz") + ["ch", "sh", "th", "tr", "pl", "gr", "st"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou", "ee"]
    codas = ["", "", "n", "r", "s", "t", "l", "m", "nd", "st"]
    words = set()
    while len(words) < count:
        n = 1 + rng.randint(4)
        words.add("".join(onsets[rng.randint(len(onsets))] + vowels[rng.randint(len(vowels))]
                          + codas[rng.randint(len(codas))] for _ in range(n)))
    return sorted(words)


def shipped_tokenizer(path, vocab_size):
    words = pseudo_words(12000)
    rng = np.random.RandomState(1)
    lines = V.tokenizer_corpus()
    lines += [" ".join(words[j] for j in rng.randint(len(words), size=12)) for _ in range(8000)]
    with open(path, "wb") as f:
        f.write(V.common.train_sentencepiece(lines, vocab_size, T.CHAT_MARKERS,
                                             add_dummy_prefix=True))
    tok = T.SANTokenizer(path)
    assert tok.vocab_size == vocab_size
    return tok


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--widths", choices=sorted(WIDTHS), default="4")
    ap.add_argument("--heads", choices=sorted(HEADS), default="all")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out")
    args = ap.parse_args()
    out = args.out or os.path.normpath(os.path.join(here, "..", "..", "bench",
                                   f"needle2-shipped-w{args.widths}.cact"))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    start = time.time()

    case = dict(config=SHIPPED, bits_map=WIDTHS[args.widths], kv_window="effective",
                heads=HEADS[args.heads])
    cfg = V.make_config(case)
    ref = V.Reference(cfg)
    tok = shipped_tokenizer(out + ".tokenizer.model", cfg.vocab_size)
    os.remove(out + ".tokenizer.model")
    params = V.perturb_params(V.init_params(ref.model, args.seed), args.seed)
    info = V.export(params, cfg, case, tok, out)
    print(f"wrote {out}: {info['bytes'] / 1e6:.1f} MB, {info['tensors']} tensors, "
          f"kv_window {V.header_kv_window(case, cfg)}, {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
