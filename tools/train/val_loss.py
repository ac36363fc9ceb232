"""Validation loss of trained weights or of an exported container (train.py's figure, on demand).

Prints the float figure and the quantised one train.py reports (weights through CQ 4-bit,
int8 activations and KV). For a `.cact` it also prints the deployed figure: its own
CQ-dequantised weights with int8 activations and KV, not quantised a second time, which is
what a runtime computes. Several --model files are averaged parameter by parameter
(all must share one geometry).

Usage: python val_loss.py --data DIR --model A.cact|params.pkl [--model B ...] [--max-len 256]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from needle.model.quantize import configure_deploy  # noqa: E402
from needle.model.tokenizer import SANTokenizer  # noqa: E402

from model_io import init_params, make_config, num_layers_of  # noqa: E402
from objective import Validation  # noqa: E402
from train import load_init  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, help="dir with val.jsonl and tokenizer.model")
    parser.add_argument("--model", action="append", required=True)
    parser.add_argument("--max-len", type=int, default=256)
    parser.add_argument("--short-len", type=int, default=192)
    args = parser.parse_args()
    tokenizer = SANTokenizer(os.path.join(args.data, "tokenizer.model"))
    weights = [load_init(path) for path in args.model]
    params = jax.tree.map(lambda *leaves: jnp.mean(jnp.stack(leaves), axis=0), *weights)
    model, _ = init_params(make_config(tokenizer.vocab_size, num_layers=num_layers_of(params)))
    validation = Validation(model, args.data, tokenizer, args.max_len, min(args.short_len, args.max_len))
    configure_deploy(act_bits=8, kv_bits=8)
    print(f"{' + '.join(args.model)}: val loss {validation.text(params, False)}, "
          f"quantised {validation.text(params, True)}", flush=True)
    if len(args.model) == 1 and args.model[0].endswith(".cact"):
        print(f"deployed (its own CQ weights, int8 activations and KV) "
              f"{validation.text(params, True, requantise=False)}")


if __name__ == "__main__":
    main()
