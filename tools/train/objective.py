"""The training objective and the validation figure, shared by train.py and val_loss.py.

Loss is cross-entropy on the answer tokens only (upstream's `_encode` mask). `quant=True`
is upstream's deploy path (int8 activations and KV after `configure_deploy`); `requantise`
additionally passes the weights through CQ 4-bit (`cq_ste_params`, straight-through), which
is what training uses. A container's weights are already CQ-dequantised, so its deployed
figure is `quant=True, requantise=False`: re-quantising them is not the identity (each
group's norm is recomputed from the dequantised group) and reads ~0.0016 higher.
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
from needle.model.finetune import _encode, render_example
from needle.model.quantize import WEIGHT_BITS, cq_ste_params


def load(path, tokenizer, max_len, keys=False):
    """Encode a jsonl split; examples longer than max_len are dropped, never truncated.
    Also returns each kept example's token count, for length bucketing, and with `keys` each
    one's system prompt and tool list as a string (packing.py groups prompts by it)."""
    seqs, masks, lengths, dropped, prompt_keys = [], [], [], 0, []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            example = json.loads(line)
            prompt, target = render_example(example)
            length = len(tokenizer.encode(prompt)) + len(tokenizer.encode(target)) + 2
            if length > max_len:
                dropped += 1
                continue
            ids, mask = _encode(tokenizer, example, max_len)
            seqs.append(ids)
            masks.append(mask)
            lengths.append(length)
            prompt_keys.append(json.dumps([example.get("system"), example.get("tools")]))
    loaded = np.asarray(seqs, np.int32), np.asarray(masks, np.float32), np.asarray(lengths), dropped
    return (*loaded, prompt_keys) if keys else loaded


def answer_loss(model, params, ids, mask, quant, requantise=True, focal=0.0):
    """Mean cross-entropy over the answer tokens. `focal` > 0 (training only, phase 50) weighs
    each token by (1 - p)^focal, p the model's probability of it (held constant in the
    gradient): exact match fails at the first wrong token, and at this size nearly every
    answer token is already right, so the plain mean spends most of its gradient on them."""
    if quant and requantise:
        params = cq_ste_params(params, WEIGHT_BITS)
    logits = model.apply({"params": params}, ids, quant=quant)
    ce = optax.softmax_cross_entropy_with_integer_labels(logits[:, :-1], ids[:, 1:])
    m = mask[:, 1:]
    if focal:
        m = m * jax.lax.stop_gradient(-jnp.expm1(-ce)) ** focal
    return (ce * m).sum() / jnp.maximum(mask[:, 1:].sum(), 1.0)


class Validation:
    """The first 256 held-out examples that fit max_len; with a longer max_len, also the first
    256 that fit short_len, which is the set earlier (short) phases reported."""

    def __init__(self, model, data_dir, tokenizer, max_len, short_len):
        self.seqs, self.masks, lengths, _ = load(os.path.join(data_dir, "val.jsonl"), tokenizer, max_len)
        self.sets = [np.arange(len(self.seqs))[:256]]
        if max_len > short_len:
            self.sets.append(np.flatnonzero(lengths <= short_len)[:256])
        self.short_len = short_len
        self.loss = jax.jit(lambda p, ids, mask, quant, requantise: answer_loss(
            model, p, ids, mask, quant, requantise), static_argnums=(3, 4))

    def mean(self, params, idx, quant, requantise=True):
        return float(np.mean([float(self.loss(params, jnp.asarray(self.seqs[idx[i:i + 32]]),
                                              jnp.asarray(self.masks[idx[i:i + 32]]), quant, requantise))
                              for i in range(0, len(idx), 32)]))

    def text(self, params, quant, requantise=True):
        figures = [self.mean(params, idx, quant, requantise) for idx in self.sets]
        text = f"{figures[0]:.4f}"
        if len(figures) > 1:
            text += f" (fitting {self.short_len}: {figures[1]:.4f})"
        return text
