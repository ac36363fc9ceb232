"""Acceptance pass rates of a `.cact` under upstream's JAX model (the preliminary figure).

Reads the container back with upstream's `read_export`, rebuilds the flax params
(CQ-dequantised weights, exactly what a runtime sees), renders each case with
upstream's `render_example` (the environment's system prompt and tools), decodes
greedily and scores as upstream's harness does.

Usage: python eval_reference.py [--model www/models/default.cact] [--numerics f32|deploy]
       [--verbose] [--json OUT]
"""
import argparse
import functools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from needle.model.export import RefTokenizer, read_export  # noqa: E402
from needle.model.finetune import render_example  # noqa: E402
from needle.model.quantize import configure_deploy  # noqa: E402
from needle.model.tokenizer import BOS_ID, EOS_ID, IM_END_ID, PAD_ID  # noqa: E402

import scoring  # noqa: E402
from model_io import params_from_export  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def greedy(model, params, prompts, max_new, quant, batch=32):
    """Greedy continuation of each prompt (token lists), stopping at EOS or <|im_end|>."""
    length = max(len(p) for p in prompts) + max_new
    length = -(-length // 32) * 32
    fwd = jax.jit(lambda p, t: model.apply({"params": p}, t, quant=quant))
    outputs = []
    for start in range(0, len(prompts), batch):
        group = prompts[start:start + batch]
        buf = np.full((batch, length), PAD_ID, np.int32)
        pos = np.zeros(batch, np.int64)
        for r, p in enumerate(group):
            buf[r, :len(p)] = p
            pos[r] = len(p) - 1
        done = np.array([r >= len(group) for r in range(batch)])
        gen = [[] for _ in range(batch)]
        for _ in range(max_new):
            logits = np.asarray(fwd(params, jnp.asarray(buf)))
            for r in range(batch):
                if done[r]:
                    continue
                token = int(np.argmax(logits[r, pos[r]]))
                if token == EOS_ID or pos[r] + 1 >= length:
                    done[r] = True
                    continue
                gen[r].append(token)
                pos[r] += 1
                buf[r, pos[r]] = token
                if token == IM_END_ID:
                    done[r] = True
            if done.all():
                break
        outputs += gen[:len(group)]
    return outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=os.path.join(ROOT, "www", "models", "default.cact"))
    parser.add_argument("--numerics", choices=("f32", "deploy"), default="f32")
    parser.add_argument("--max-new", type=int, default=80)
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases per environment")
    parser.add_argument("--verbose", action="store_true", help="print every failing case")
    parser.add_argument("--json", help="write per-case results here")
    args = parser.parse_args()

    header, tensors = read_export(args.model)
    tokenizer = RefTokenizer.from_cact(args.model)
    # Every case of an environment shares its tools segment: encode each segment once.
    tokenizer._bpe = functools.lru_cache(maxsize=None)(tokenizer._bpe)
    model, config, params = params_from_export(header, tensors)
    quant = args.numerics == "deploy"
    if quant:
        configure_deploy(act_bits=8, kv_bits=8)

    suites = scoring.load_suites(ROOT)
    cases, prompts = [], []
    for env, suite in suites.items():
        for case in suite["cases"][:args.limit or None]:
            prompt, _ = render_example({"query": case["query"], "tools": suite["tools"],
                                        "system": suite["system"]})
            cases.append((env, case))
            prompts.append([BOS_ID] + tokenizer.encode(prompt))
    texts = [tokenizer.decode(ids) for ids in greedy(model, params, prompts, args.max_new, quant)]

    results, records = [], []
    for (env, case), text in zip(cases, texts):
        got = scoring.calls_from_text(text)
        ok = scoring.passed(got, case["calls"])
        results.append((env, case["category"], ok))
        records.append({"env": env, "category": case["category"], "ok": ok, "output": text})
        if args.verbose and not ok:
            print(f"FAIL {env} [{case['category']}] {case['query']}\n  want {json.dumps(case['calls'])}\n  got  {text}")
    print(f"model {args.model}  numerics {args.numerics}")
    scoring.report(results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(records, handle, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
