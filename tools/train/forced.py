"""Teacher-forced answer figures by prompt length: where a phase stands on an environment
without decoding (session 24).

For the first N positive and parallel examples of each group (the six environments, the
browser) in a generator file, per prompt-length bucket: the mean cross-entropy of the answer
tokens and how many answers the model would reproduce token for token given the right prefix
(every answer token its argmax). Float path, as training sees it; a phase's exported container
adds CQ 4-bit weights and int8 activations on top. Greedy decoding can only be right where
the forced answer is, so the exact count bounds what `eval_runtime.py --examples` would score.

Usage: python forced.py --data DIR (train.jsonl + tokenizer.model) MODEL [MODEL ...]
       (MODEL: a params.pkl, checkpoint.pkl or .cact, as train.py --init takes)
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from needle.model.finetune import _encode, render_example  # noqa: E402
from needle.model.tokenizer import SANTokenizer  # noqa: E402

from model_io import init_params, make_config  # noqa: E402
from train import load_init  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")
BUCKETS = ((0, 256), (257, 600), (601, 1024))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True)
    parser.add_argument("--six", type=int, default=48, help="examples of the six environments")
    parser.add_argument("--browser", type=int, default=160, help="browser examples")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    tok = SANTokenizer(os.path.join(args.data, "tokenizer.model"))
    model, _ = init_params(make_config(tok.vocab_size, num_layers=args.layers), 0)
    with open(os.path.join(args.data, "train.jsonl"), encoding="utf-8") as handle:
        examples = [json.loads(line) for line in handle]
    answered = [e for e in examples if e["category"] in ("positive", "parallel")]
    groups = {"six": [e for e in answered if e["env"] != "browser"][:args.six],
              "browser": [e for e in answered if e["env"] == "browser"][:args.browser]}

    @jax.jit
    def forced(params, ids):
        logits = model.apply({"params": params}, ids, quant=False)[:, :-1]
        return optax.softmax_cross_entropy_with_integer_labels(logits, ids[:, 1:]), logits.argmax(-1)

    for path in args.models:
        params = load_init(path)
        for group, rows in groups.items():
            encoded = [(*_encode(tok, e, 1024), len(tok.encode(render_example(e)[0]))) for e in rows]
            for low, high in BUCKETS:
                bucket = [r for r in encoded if low <= r[2] <= high]
                if not bucket:
                    continue
                ce_sum = tokens = exact = 0
                for i in range(0, len(bucket), 16):
                    ids = np.asarray([r[0] for r in bucket[i:i + 16]])
                    mask = np.asarray([r[1] for r in bucket[i:i + 16]])[:, 1:]
                    ce, argmax = (np.asarray(x) for x in forced(params, jnp.asarray(ids)))
                    ce_sum += float((ce * mask).sum())
                    tokens += float(mask.sum())
                    exact += int(((argmax == ids[:, 1:]) | (mask == 0)).all(axis=1).sum())
                print(f"{path}  {group} prompt {low}-{high} tokens: n {len(bucket)}  answer CE "
                      f"{ce_sum / tokens:.3f}  forced exact {exact}/{len(bucket)}", flush=True)


if __name__ == "__main__":
    main()
