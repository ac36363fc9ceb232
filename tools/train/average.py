"""Average several runs parameter by parameter into one params.pkl (a "soup").

Sibling runs trained from one parent on different data land in one basin, so their mean can
generalise better than each; export.py and train.py --init take the result like any run.

Usage: python average.py --model A/params.pkl --model B/params.pkl [...] --out DIR
"""
import argparse
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from train import load_init  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", action="append", required=True,
                        help="params.pkl, checkpoint.pkl or .cact (all of one geometry)")
    parser.add_argument("--out", required=True, help="directory for params.pkl")
    args = parser.parse_args()
    weights = [load_init(path) for path in args.model]
    shapes = {str(jax.tree.map(jnp.shape, w)) for w in weights}
    if len(shapes) != 1:
        raise SystemExit("the models differ in geometry")
    params = jax.tree.map(lambda *leaves: np.asarray(jnp.mean(jnp.stack(leaves), axis=0)), *weights)
    vocab = int(np.shape(params["embedding"]["embedding"])[0])
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "params.pkl"), "wb") as handle:
        pickle.dump({"params": params, "vocab": vocab}, handle)
    print(f"mean of {len(weights)} models -> {os.path.join(args.out, 'params.pkl')}")


if __name__ == "__main__":
    main()
