"""Train a container's confidence head on the model's own labelled answers, and write the
container with that head added; every backbone tensor keeps its exact bytes.

Upstream's local fine-tuning leaves the confidence head untrained and drops it, so a model
trained here reports no confidence. This trains upstream's own `ConfidenceHead` (a probe pool
over every layer's hidden states of the whole exchange, then a logit) with a binary
cross-entropy on whether the answer was right (`label_runs.py`), the backbone frozen; the last
steps see the head's matrices as the engine does (CQ at upstream's HEAD_BITS, quantisation-aware).
The container is written by upstream's packer (`needle.model.export`): its header, its head
encoding, the backbone's original tensor records and the original tokenizer.

Usage: python tools/train/confidence.py --model www/models/default.cact --runs runs.jsonl
       --out with_head.cact [--eval runsV.jsonl] [--steps 1500] [--qat-steps 300]
"""
import argparse
import hashlib
import json
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from needle.model import export as cact  # noqa: E402
from needle.model.architecture import ConfidenceHead, SimpleAttentionNetwork  # noqa: E402

import calibration  # noqa: E402
from model_io import params_from_export  # noqa: E402

PAD = 64  # exchanges are padded to a multiple of this, batches to a fixed row count (fewer
# shapes to compile)


def load_runs(path):
    """Unique exchanges and their labels (identical exchanges carry the same answer)."""
    seen = {}
    for line in open(path, encoding="utf-8"):
        row = json.loads(line)
        seen.setdefault(tuple(row["ids"]), bool(row["ok"]))
    return list(seen), np.asarray(list(seen.values()), np.float32)


def held_out(ids):
    """A fixed tenth of the exchanges, chosen by content, watched during training."""
    return hashlib.sha256(repr(ids).encode()).digest()[0] < 26


def batches(n, size, rng):
    order = rng.permutation(n)
    for i in range(0, n - size + 1, size):
        yield order[i:i + size]


def pad(rows, count):
    width = -(-max(len(r) for r in rows) // PAD) * PAD
    out = np.zeros((count, width), np.int32)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def compute_cells(model, params, exchanges, batch=16):
    """Every layer's hidden states over each exchange (float16, unpadded)."""
    fn = jax.jit(lambda p, t: model.apply({"params": p}, t, method=SimpleAttentionNetwork.hidden_cells))
    order = np.argsort([len(e) for e in exchanges])
    cells = [None] * len(exchanges)
    for i in range(0, len(order), batch):
        idx = order[i:i + batch]
        out = np.asarray(fn(params, jnp.asarray(pad([exchanges[j] for j in idx], batch))), np.float16)
        for k, j in enumerate(idx):
            cells[j] = out[k, :len(exchanges[j])]
    return cells


def stack(cells, idx, count=None):
    width = -(-max(cells[j].shape[0] for j in idx) // PAD) * PAD
    x = np.zeros((count or len(idx), width) + cells[idx[0]].shape[1:], np.float32)
    keep = np.zeros((count or len(idx), width), np.float32)
    for k, j in enumerate(idx):
        x[k, :cells[j].shape[0]] = cells[j]
        keep[k, :cells[j].shape[0]] = 1
    return jnp.asarray(x), jnp.asarray(keep)


def backbone_records(path, model_tensors):
    """The container's own tensor records (all but the tokenizer) and its tokenizer blob,
    checked record by record against what upstream's packer would write for these params."""
    raw = open(path, "rb").read()
    head = struct.unpack_from(cact._HDR_FMT, raw, 0)
    off = struct.calcsize(cact._HDR_FMT) + head[2] * 4
    records, tokenizer = [], None
    for _ in range(head[1]):
        rec = struct.unpack(cact._REC_FMT, raw[off:off + cact.REC_SIZE])
        off += cact.REC_SIZE
        dtype, ndim, shape = rec[0], rec[1], tuple(rec[3:3 + rec[1]])
        blob = raw[rec[7]:rec[7] + rec[8]]
        if dtype == cact.RAW:
            tokenizer = blob
            continue
        records.append(cact._Tensor(f"t{len(records)}", dtype, shape, blob, rec[9], rec[10]))
    if len(records) != len(model_tensors) or any(
            (r.dtype, r.shape, len(r.blob)) != (m.dtype, m.shape, len(m.blob))
            for r, m in zip(records, model_tensors)):
        raise SystemExit(f"{path}: its records are not a plain backbone (a head already present?)")
    return records, tokenizer


def write_with_head(path, out, header, config, params, head_params):
    expected = cact._tensors(params, config, cact.WEIGHT_BITS, 128)
    records, tokenizer = backbone_records(path, expected)
    group = 128
    original = cact._tensors
    cact._tensors = lambda p, c, bits, g, audio=None: records + cact._head_tensors(p, g)
    try:
        buf, n = cact._pack_cact({"confidence_head": head_params}, config, cact.WEIGHT_BITS, group,
                                 tokenizer, kv_window=header["kv_window"])
    finally:
        cact._tensors = original
    with open(out, "wb") as handle:
        handle.write(buf)
    return len(buf), n


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--runs", required=True, help="label_runs.py output to train on")
    parser.add_argument("--eval", help="label_runs.py output to report on (not trained on)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--qat-steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.time()

    header, tensors = cact.read_export(args.model)
    model, config, params = params_from_export(header, tensors)
    exchanges, labels = load_runs(args.runs)
    watch = np.asarray([held_out(e) for e in exchanges])
    print(f"{len(exchanges)} unique exchanges, {labels.mean():.3f} right; {watch.sum()} watched")
    cells = compute_cells(model, params, exchanges)
    print(f"hidden states in {time.time() - start:.0f} s")

    head = ConfidenceHead(config)
    x0, k0 = stack(cells, [0])
    head_params = head.init(jax.random.PRNGKey(args.seed), x0, k0, None, quant=False)["params"]
    rate = float(labels[~watch].mean())
    head_params = jax.tree.map(jnp.asarray, head_params)
    head_params["proj"]["bias"] = jnp.full_like(head_params["proj"]["bias"], np.log(rate / (1 - rate)))

    def logits(p, x, keep, quant):
        return head.apply({"params": p}, x, keep, None, quant=quant)[..., 0]

    def loss_fn(p, x, keep, y, quant):
        return optax.sigmoid_binary_cross_entropy(logits(p, x, keep, quant), y).mean()

    schedule = optax.warmup_cosine_decay_schedule(0.0, args.lr, 50, args.steps, args.lr * 0.05)
    opt = optax.adamw(schedule, weight_decay=1e-4)
    state = opt.init(head_params)

    @jax.jit
    def step(p, s, x, keep, y, quant):
        loss, grad = jax.value_and_grad(loss_fn)(p, x, keep, y, quant)
        updates, s = opt.update(grad, s, p)
        return optax.apply_updates(p, updates), s, loss

    score_fn = jax.jit(lambda p, x, keep: jax.nn.sigmoid(logits(p, x, keep, True)))

    def scores(p, cell_list):
        order = np.argsort([c.shape[0] for c in cell_list])
        out = np.zeros(len(cell_list), np.float32)
        for i in range(0, len(order), 64):
            idx = order[i:i + 64]
            x, keep = stack(cell_list, idx, 64)
            out[idx] = np.asarray(score_fn(p, x, keep))[:len(idx)]
        return out

    train_idx = np.flatnonzero(~watch)
    rng = np.random.default_rng(args.seed)
    done, losses = 0, []
    while done < args.steps:
        for b in batches(len(train_idx), args.batch, rng):
            idx = train_idx[b]
            x, keep = stack(cells, idx)
            quant = done >= args.steps - args.qat_steps
            head_params, state, loss = step(head_params, state, x, keep, jnp.asarray(labels[idx]), quant)
            losses.append(float(loss))
            done += 1
            if done % 250 == 0 or done == args.steps:
                watched = [cells[j] for j in np.flatnonzero(watch)]
                p = scores(head_params, watched)
                print(f"step {done}  loss {np.mean(losses[-250:]):.4f}  watched AUROC "
                      f"{calibration.auroc(p.tolist(), labels[watch].tolist()):.4f}  ({time.time() - start:.0f} s)")
            if done == args.steps:
                break

    if args.eval:
        ex, lab = load_runs(args.eval)
        p = scores(head_params, compute_cells(model, params, ex))
        print(f"eval {args.eval}: {calibration.summary(p.tolist(), lab.tolist())}")

    size, n = write_with_head(args.model, args.out, header, config, params,
                              jax.tree.map(np.asarray, head_params))
    print(f"{args.out}: {size} bytes, {n} tensors ({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
