"""Writes a random-weight Needle 3 container at the shipped geometry, for benchmarks.

    tools/reference/.venv-v3/bin/python tools/reference/shipped_geometry.py [--widths 4|mixed]
        [--heads confidence|all|none] [--out bench/needle3-shipped-w4.cact]

Never commit the output (bench/ is ignored): it is 35-67 MB and regenerates
byte-identically from the seed. The geometry is the published needle3.cact's:
d_model 768, 20 layers, 12/2 heads, qk 48 / v 64 (hada_n 1024), 4 mHC lanes,
window 1024 with globals 4,9,14,19, QKV conv taps 3, Engram orders 2,3 x 3
heads, 18432 slots, sub_dim 128, sites 3,7,11,15,19, vocab 16384.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

common.setup_jax()
from needle.model import finetune as F  # noqa: E402
from needle.model import tokenizer as T  # noqa: E402

import v3_model as M  # noqa: E402

SHIPPED = dict(vocab_size=16384, d_model=768, num_heads=12, num_kv_heads=2, num_layers=20,
               qk_head_dim=48, v_head_dim=64, max_seq_len=4096, mhc_lanes=4,
               sliding_window=1024, global_layers=(4, 9, 14, 19), qkv_conv_taps=3,
               engram_orders=(2, 3), engram_heads=3, engram_slots=18432,
               engram_layers=(3, 7, 11, 15, 19))
HEADS = {"confidence": ("confidence",), "all": ("embedding", "confidence", "router"), "none": ()}
# "mixed" approximates the published file's width mix (2, 3, 4 and ternary).
WIDTHS = {"4": None, "mixed": {"cycle": (2, 3, 4, M.TERNARY), "fixed": {"embedding": 4}}}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--widths", choices=sorted(WIDTHS), default="4")
    ap.add_argument("--heads", choices=sorted(HEADS), default="confidence")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out")
    args = ap.parse_args()
    out = args.out or os.path.join(here, "..", "..", "bench", f"needle3-shipped-w{args.widths}.cact")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    start = time.time()

    # The fixtures' small tokenizer (640 pieces): ids past it decode to nothing.
    corpus = common.tokenizer_corpus(F.render_example)
    sp = common.load_sentencepiece(common.train_sentencepiece(corpus, 640, T.CHAT_MARKERS))
    config = M.make_config(SHIPPED)
    params = M.undegenerate(M.initializer(config, HEADS[args.heads])(args.seed), args.seed)
    widths = WIDTHS[args.widths]
    plan = M.WidthPlan(widths["cycle"], widths["fixed"]) if widths else None
    names = M.write_container(params, config, out, M.tokenizer_blob(sp), plan=plan)
    print(f"wrote {out}: {os.path.getsize(out) / 1e6:.1f} MB, {len(names)} tensors, "
          f"{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
