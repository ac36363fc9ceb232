"""Train the default Needle 3 from scratch on the synthetic data (CPU, resumable).

Upstream's flax model, full-parameter optax adamw (clip 1.0, warmup + cosine),
upstream's `_encode` (loss on the answer tokens only). The last `--qat-steps` run
under upstream's quantisation-aware path: `cq_ste_params` (CQ 4-bit weights,
straight-through) and `quant=True` after `configure_deploy(act_bits=8, kv_bits=8)`,
so the exported 4-bit container keeps the float model's accuracy.

Examples longer than `--max-len` are dropped; when it exceeds `--short-len`, batches of
examples that all fit the shorter length are padded to it only (two length buckets), and
`--mid-len` adds a third between them (phase 55: short browser prompts of ~300 tokens).

A checkpoint (params, optimiser state, step) is written atomically every
`--save-every` steps; rerunning the same command resumes from it. `--init FILE`
starts a new run (fresh optimiser, step 0) from the weights of an earlier one
(its params.pkl or checkpoint.pkl, or an exported `.cact`, whose CQ-dequantised
weights are what the runtime sees); a checkpoint in --work still takes precedence,
so the same command resumes. `--layers N` above the init's depth first appends
layers that leave its function unchanged (model_io.deepen, phase 20), and an init with fewer
pieces than the data's tokenizer (extend_vocab.py appends them) gets their embedding rows
(model_io.widen_vocab, session 32).

`--pack-prefix N` (session 25) trains batches of examples that share a prompt opening of at
least N tokens (the browser's full tool list) as one packed row on the float steps
(packing.py: ~3x fewer tokens); the QAT tail runs them unpacked, as the runtime sees them.

Usage: python train.py --data DIR --work DIR [--steps N] [--qat-steps N] [--init FILE] ...
"""
import argparse
import os
import pickle
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from needle.model.export import read_export  # noqa: E402
from needle.model.quantize import configure_deploy  # noqa: E402
from needle.model.tokenizer import SANTokenizer  # noqa: E402

from objective import Validation, answer_loss, load  # noqa: E402
from packing import PackedModel, common_prefix_groups, pack_row, packed_answer_ce  # noqa: E402
from model_io import (GEOMETRY, deepen, init_params, make_config, num_layers_of,  # noqa: E402
                      params_from_export, widen_vocab)
from extend_vocab import sources  # noqa: E402

jax.config.update("jax_default_matmul_precision", "highest")


def load_init(path):
    """Weights to warm-start from: a pickled run (params.pkl, checkpoint.pkl) or a `.cact`."""
    if path.endswith(".cact"):
        header, tensors = read_export(path)
        return params_from_export(header, tensors)[2]
    with open(path, "rb") as handle:
        return jax.tree.map(jnp.asarray, pickle.load(handle)["params"])


def save_checkpoint(path, state):
    tmp = path + ".tmp"
    with open(tmp, "wb") as handle:
        pickle.dump(jax.tree.map(np.asarray, state), handle)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, help="dir with train.jsonl, val.jsonl, tokenizer.model")
    parser.add_argument("--work", required=True, help="dir for checkpoints and logs")
    parser.add_argument("--steps", type=int, default=2400)
    parser.add_argument("--qat-steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--max-len", type=int, default=192,
                        help="longest example kept (longer ones are dropped)")
    parser.add_argument("--short-len", type=int, default=192,
                        help="batches whose examples all fit are padded to this length only")
    parser.add_argument("--mid-len", type=int, default=0,
                        help="a third length bucket between --short-len and --max-len (0: none)")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--save-every", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init", help="warm start: params.pkl, checkpoint.pkl or .cact of an earlier run")
    parser.add_argument("--layers", type=int, default=GEOMETRY["num_layers"],
                        help="depth; an --init with fewer layers is deepened (model_io.deepen)")
    parser.add_argument("--new-layer-opening", type=float, default=0.0,
                        help="appended layers start at this fraction of the layer they copy (0: off)")
    parser.add_argument("--new-layer-lr", type=float, default=1.0,
                        help="learning-rate multiplier for the layers --layers appends to --init")
    parser.add_argument("--focal", type=float, default=0.0,
                        help="weigh each answer token's loss by (1 - p)^FOCAL (0: the plain mean; phase 50)")
    parser.add_argument("--stop-at", type=int, default=0,
                        help="end the run at this step, mid-schedule, writing params.pkl (0: at --steps)")
    parser.add_argument("--pack-prefix", type=int, default=0,
                        help="float steps train batches sharing a prompt opening of >= N tokens as "
                             "one packed row (packing.py; 0: off)")
    parser.add_argument("--no-initial-val", action="store_true",
                        help="skip the step-0 validation of a warm start (minutes at --max-len 1024)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    tokenizer = SANTokenizer(os.path.join(args.data, "tokenizer.model"))
    config = make_config(tokenizer.vocab_size, num_layers=args.layers)
    model, params = init_params(config, args.seed)
    n_params = sum(int(np.prod(p.shape)) for p in jax.tree.leaves(params))
    if args.pack_prefix and args.focal:
        raise SystemExit("--pack-prefix does not implement --focal")
    seqs, masks, lengths, dropped, keys = load(os.path.join(args.data, "train.jsonl"), tokenizer,
                                               args.max_len, keys=True)
    groups = list(common_prefix_groups(keys, seqs, masks, args.pack_prefix).values()) \
        if args.pack_prefix else []
    packed_model = PackedModel(tokenizer.vocab_size, args.layers) if groups else None
    short_len = min(args.short_len, args.max_len)
    validation = Validation(model, args.data, tokenizer, args.max_len, short_len)
    print(f"params {n_params}  vocab {tokenizer.vocab_size}  train {len(seqs)} (dropped {dropped} "
          f"over {args.max_len} tokens, {int((lengths > short_len).sum())} over {short_len})  "
          f"val {len(validation.seqs)}", flush=True)

    schedule = optax.warmup_cosine_decay_schedule(0.0, args.lr, args.warmup, args.steps,
                                                  end_value=args.lr * 0.02)
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=0.01))
    configure_deploy(act_bits=8, kv_bits=8)
    init_weights = None
    if args.init:
        init_weights = load_init(args.init)
    # Appended layers start switched off; Adam moves a weight about lr per step, so they may
    # need a larger step than the trained layers to open within a short run.
    layer_lr = np.ones(args.layers, np.float32)
    if init_weights is not None:
        layer_lr[num_layers_of(init_weights):] = args.new_layer_lr

    def per_layer(path, update):
        keys = [getattr(k, "key", None) for k in path]
        if keys[0] == "stack" and (keys[1] == "layers" or str(keys[1]).startswith("mhc_")):
            return update * layer_lr.reshape((-1,) + (1,) * (update.ndim - 1))
        return update

    def make_step(loss_fn):
        """One optimiser step on `loss_fn(params, *batch)`, jitted."""
        @jax.jit
        def step(p, opt_state, *batch):
            loss, grads = jax.value_and_grad(loss_fn)(p, *batch)
            updates, opt_state = optimizer.update(grads, opt_state, p)
            updates = jax.tree_util.tree_map_with_path(per_layer, updates)
            return optax.apply_updates(p, updates), opt_state, loss
        return step

    def unpacked_loss(quant):
        return lambda p, ids, mask: answer_loss(model, p, ids, mask, quant, focal=args.focal)

    def packed_loss(p, ids, pos, attend, answer):
        total, count = packed_answer_ce(packed_model, p, ids, pos, attend, answer, False)
        return total / jnp.maximum(count, 1.0)

    float_step, qat_step, packed_step = (make_step(unpacked_loss(False)), make_step(unpacked_loss(True)),
                                         make_step(packed_loss))

    ckpt = os.path.join(args.work, "checkpoint.pkl")
    state = {"params": params, "opt": optimizer.init(params), "step": 0}
    if os.path.exists(ckpt):
        with open(ckpt, "rb") as handle:
            state = pickle.load(handle)
        state = jax.tree.map(jnp.asarray, state)
        state["step"] = int(state["step"])
        print(f"resumed from step {state['step']}", flush=True)
    elif args.init:
        loaded = init_weights
        rows = int(np.shape(loaded["embedding"]["embedding"])[0])
        if rows < tokenizer.vocab_size:
            print(f"widening {args.init} from {rows} to {tokenizer.vocab_size} pieces", flush=True)
            loaded = widen_vocab(loaded, sources(os.path.join(args.data, "tokenizer.model"), rows))
        if num_layers_of(loaded) < args.layers:
            print(f"deepening {args.init} from {num_layers_of(loaded)} to {args.layers} layers", flush=True)
            loaded = deepen(loaded, args.layers, args.new_layer_opening)
        if jax.tree.structure(loaded) != jax.tree.structure(params) or any(
                a.shape != b.shape for a, b in zip(jax.tree.leaves(loaded), jax.tree.leaves(params))):
            raise SystemExit(f"{args.init}: parameter tree does not match this geometry")
        state = {"params": loaded, "opt": optimizer.init(loaded), "step": 0}
        print(f"initialised from {args.init} (fresh optimiser)", flush=True)
    params, opt_state, step = state["params"], state["opt"], state["step"]

    total = args.steps
    qat_from = total - args.qat_steps
    end = min(total, args.stop_at) if args.stop_at > 0 else total
    # Length buckets: most examples fit short_len, so only batches of long ones pay for a wider
    # shape (one compiled shape per bucket). With max_len == short_len this is one plain shuffle.
    widths = sorted({short_len, args.max_len}
                    | ({args.mid_len} if short_len < args.mid_len < args.max_len else set()))
    bucket = np.searchsorted(widths, lengths)  # the narrowest width each example fits
    # A packing group of at least one batch makes whole batches of its own; which of its members
    # are left over changes with the epoch's shuffle, so they wait for a later epoch and the
    # epoch's length stays fixed (resuming maps a step to the same batch).
    group_of = np.full(len(seqs), -1)
    for g, (_, members) in enumerate(groups):
        group_of[members] = g
    grouped = [len(members) // args.batch for _, members in groups]
    loose = np.flatnonzero((group_of < 0) | (np.asarray(grouped + [0])[group_of] == 0))
    per_epoch = sum(grouped) + sum(int((bucket[loose] == b).sum()) // args.batch for b in range(len(widths)))
    orders = {}
    if groups:
        print(f"packing: {sum(n > 0 for n in grouped)} groups sharing >= {args.pack_prefix} tokens make "
              f"{sum(grouped)} of {per_epoch} batches an epoch", flush=True)

    def epoch_batches(epoch):
        rng = np.random.default_rng([args.seed, epoch])  # depends on the epoch only: resuming replays it
        order = rng.permutation(len(seqs))
        batches = []
        for g, n in enumerate(grouped):
            members = order[group_of[order] == g]
            batches += [(g, members[k * args.batch:(k + 1) * args.batch]) for k in range(n)]
        pools = order[np.isin(order, loose)]
        for b in range(len(widths)):
            pool = pools[bucket[pools] == b]
            batches += [(-1, pool[k:k + args.batch]) for k in range(0, len(pool) - args.batch + 1, args.batch)]
        if not bucket.any() and not groups:  # one pool: the plain shuffle earlier phases were trained with
            return batches
        return [batches[j] for j in rng.permutation(len(batches))]

    def batch(i, packed):
        epoch, k = divmod(i, per_epoch)
        if epoch not in orders:
            orders[epoch] = epoch_batches(epoch)
        g, idx = orders[epoch][k]
        if g >= 0 and packed:
            return tuple(jnp.asarray(a) for a in pack_row(seqs, masks, lengths, idx, groups[g][0]))
        width = widths[bucket[idx].max()]
        return jnp.asarray(seqs[idx, :width]), jnp.asarray(masks[idx, :width])

    def val(quant):
        return validation.text(params, quant)

    if step == 0 and args.init and not args.no_initial_val:
        print(f"step 0 val loss {val(False)}, quantised {val(True)}", flush=True)
    t0, last, window = time.time(), time.time(), []
    while step < end:
        quant = step >= qat_from
        rows = batch(step, packed=not quant)
        step_fn = packed_step if len(rows) == 4 else qat_step if quant else float_step
        params, opt_state, loss = step_fn(params, opt_state, *rows)
        step += 1
        window.append(float(loss))
        if step % 25 == 0:
            now = time.time()
            print(f"step {step}/{total} {'qat' if quant else 'f32'} loss {np.mean(window):.4f} "
                  f"lr {float(schedule(step)):.2e} {25 / (now - last):.2f} steps/s "
                  f"elapsed {(now - t0) / 60:.1f} min", flush=True)
            window, last = [], now
        if step % args.save_every == 0 or step == end:
            save_checkpoint(ckpt, {"params": params, "opt": opt_state, "step": step})
        if step % 500 == 0 or step == end:
            print(f"step {step} val loss {val(quant)}", flush=True)
    with open(os.path.join(args.work, "params.pkl"), "wb") as handle:
        pickle.dump({"params": jax.tree.map(np.asarray, params), "vocab": tokenizer.vocab_size}, handle)
    print(f"done: {step} steps, {(time.time() - t0) / 60:.1f} min this run", flush=True)


if __name__ == "__main__":
    main()
