"""How close shared-prefix packing (packing.py) is to the unpacked loss, and what it saves.

For batches of `--batch` examples of the largest shared-prefix group in DATA/train.jsonl: the
answer-token cross-entropy of each batch unpacked (upstream's forward, one row per example) and
packed (one row), float and QAT paths, and the wall time of one gradient of each.

Usage: python packing_check.py --data DIR MODEL [--batches 4] [--batch 8] [--layers 6]
       [--min-prefix 256] [--max-prefix 1024] (which groups count: the six's lists are ~150-250)
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from needle.model.quantize import WEIGHT_BITS, configure_deploy, cq_ste_params  # noqa: E402
from needle.model.tokenizer import SANTokenizer  # noqa: E402

from model_io import init_params, make_config  # noqa: E402
from objective import answer_loss, load  # noqa: E402
from packing import PackedModel, common_prefix_groups, pack_row, packed_answer_ce  # noqa: E402
from train import load_init  # noqa: E402


def timed(fn, *args):
    jax.block_until_ready(fn(*args))  # compile
    t = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return time.perf_counter() - t


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--min-prefix", type=int, default=256)
    parser.add_argument("--max-prefix", type=int, default=1024)
    parser.add_argument("model")
    args = parser.parse_args()
    configure_deploy(act_bits=8, kv_bits=8)
    tok = SANTokenizer(os.path.join(args.data, "tokenizer.model"))
    seqs, masks, lengths, _, keys = load(os.path.join(args.data, "train.jsonl"), tok, 1024, keys=True)
    groups = [g for g in common_prefix_groups(keys, seqs, masks, args.min_prefix).values()
              if g[0] <= args.max_prefix]
    prefix, members = max(groups, key=lambda g: len(g[1]))
    print(f"{len(groups)} groups; largest: {len(members)} examples sharing {prefix} tokens")
    model, _ = init_params(make_config(tok.vocab_size, num_layers=args.layers), 0)
    packed = PackedModel(tok.vocab_size, args.layers)
    params = load_init(args.model)

    def unpacked_sum(p, ids, mask, quant):
        return answer_loss(model, p, ids, mask, quant) * jnp.maximum(mask[:, 1:].sum(), 1.0)

    def packed_sum(p, ids, pos, attend, answer, quant):
        if quant:
            p = cq_ste_params(p, WEIGHT_BITS)
        return packed_answer_ce(packed, p, ids, pos, attend, answer, quant)[0]

    unpacked_jit = jax.jit(unpacked_sum, static_argnums=3)
    packed_jit = jax.jit(packed_sum, static_argnums=5)
    for b in range(args.batches):
        idx = members[b * args.batch:(b + 1) * args.batch]
        width = int(lengths[idx].max())
        ids, mask = jnp.asarray(seqs[idx, :width]), jnp.asarray(masks[idx, :width])
        row = [jnp.asarray(a) for a in pack_row(seqs, masks, lengths, idx, prefix)]
        for quant in (False, True):
            u = float(unpacked_jit(params, ids, mask, quant))
            p = float(packed_jit(params, *row, quant))
            print(f"batch {b} {'qat ' if quant else 'f32 '} answer CE sum unpacked {u:.4f} packed {p:.4f} "
                  f"(relative {abs(p - u) / u:.2e}); rows {len(idx)} x {width} vs 1 x {row[0].shape[0]}")
    grad_u = jax.jit(jax.grad(unpacked_sum), static_argnums=3)
    grad_p = jax.jit(jax.grad(packed_sum), static_argnums=5)
    tu = timed(grad_u, params, ids, mask, False)
    tp = timed(grad_p, params, *row, False)
    print(f"one gradient (f32): unpacked {tu:.2f} s, packed {tp:.2f} s ({tu / tp:.1f}x)")


if __name__ == "__main__":
    main()
