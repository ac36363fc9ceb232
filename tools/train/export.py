"""Write the trained parameters as a `.cact` with upstream's `write_export` (4-bit CQ).

Usage: python export.py --work DIR --data DIR --out www/models/default.cact
Takes DIR/params.pkl (end of training) or, failing that, the latest DIR/checkpoint.pkl.
"""
import argparse
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from needle.model.export import write_export  # noqa: E402
from needle.model.tokenizer import SANTokenizer  # noqa: E402

from model_io import make_config, num_layers_of  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--max-bytes", type=int, default=8 * 1024 * 1024)
    args = parser.parse_args()
    tokenizer = SANTokenizer(os.path.join(args.data, "tokenizer.model"))
    final = os.path.join(args.work, "params.pkl")
    source = final if os.path.exists(final) else os.path.join(args.work, "checkpoint.pkl")
    with open(source, "rb") as handle:
        params = pickle.load(handle)["params"]
    params = {k: v for k, v in params.items()}
    config = make_config(tokenizer.vocab_size, num_layers=num_layers_of(params))
    info = write_export(params, config, args.out, tokenizer=tokenizer)
    n_params = sum(int(np.prod(np.shape(a))) for a in _leaves(params))
    print(f"{source} -> {info['path']}: {info['bytes']} bytes, {info['tensors']} tensors, {n_params} params")
    if info["bytes"] > args.max_bytes:
        raise SystemExit(f"container is {info['bytes']} bytes, over the {args.max_bytes} limit")


def _leaves(tree):
    if isinstance(tree, dict):
        for value in tree.values():
            yield from _leaves(value)
    else:
        yield tree


if __name__ == "__main__":
    main()
