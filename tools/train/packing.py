"""Shared-prefix packing: a batch of examples whose prompts open with the same long token run
(the browser's full tool list: ~880 of ~980 tokens) trained as one row, the run once and each
example's own tail after it (session 25).

Unpacked, a batch of 8 full-list browser examples runs the same 880-token prefix 8 times; packed,
the row is the prefix, then per member a short overlap (the prefix's last OVERLAP tokens again)
and the member's tail, ~1,650 tokens instead of 8 x 1,024. Each member's tokens attend the prefix
(less its last OVERLAP tokens), their own overlap and their own tail, causally, at the positions
they have in the unpacked sequence (RoPE by virtual position). The overlap exists for the
position-local features that look at the tokens just before (upstream's q/k/v conv taps and the
engram n-grams with their dilated conv: 11 tokens back at most, gated by the attention mask's
diagonals): a member's first tail tokens then see the prefix's real last tokens, not the previous
member's. The overlap copies' own first tokens lack that context, so the packed loss is close to,
not bit-equal with, the unpacked one (`packing_check.py` measures it). The gradient on the
prefix is the sum over the members, as in the unpacked batch.

Upstream's stack bands non-global layers at `sliding_window` physical positions; a packed row is
longer than that while no virtual distance is, so the packed model runs without the band (the
band is the identity on unpacked rows of <= max_seq_len tokens, which is why this is the same
function).
"""
import collections

import jax.numpy as jnp
import numpy as np
import optax
from needle.model.architecture import SimpleAttentionNetwork, _aq

from model_io import make_config

OVERLAP = 12  # > the 11 tokens back the engram conv reads (orders 2-3, 4 taps at dilation 3)
ROW_QUANTUM = 128  # packed rows are padded to a multiple of this (few compiled shapes)


def common_prefix_groups(keys, seqs, masks, min_prefix):
    """Examples whose prompts share a key (the system prompt and tool list) and at least
    `min_prefix` leading tokens: {group: (prefix_len, member indices)}. The prefix stops before
    the first answer token (every answer token is trained in its member's tail)."""
    by_key = collections.defaultdict(list)
    for i, key in enumerate(keys):
        by_key[key].append(i)
    groups = {}
    for key, members in by_key.items():
        if len(members) < 2:
            continue
        rows = seqs[members]
        same = (rows == rows[0]).all(axis=0)
        prefix = int(np.argmin(same)) if not same.all() else rows.shape[1]
        prefix = min(prefix, int((masks[members] > 0).argmax(axis=1).min()))
        if prefix >= min_prefix:
            groups[key] = (prefix, np.asarray(members))
    return groups


def pack_row(seqs, masks, lengths, members, prefix):
    """One packed row of `members` (indices) sharing `prefix` tokens: token ids, virtual positions,
    the attention mask (T x T), the answer mask, padded to a multiple of ROW_QUANTUM."""
    overlap = min(OVERLAP, prefix)
    pieces_ids, pieces_pos, pieces_mask, spans = [seqs[members[0], :prefix]], [np.arange(prefix)], \
        [np.zeros(prefix, np.float32)], []
    start = prefix
    for m in members:
        tail = np.arange(prefix - overlap, int(lengths[m]))
        pieces_ids.append(seqs[m, tail])
        pieces_pos.append(tail)
        pieces_mask.append(np.where(tail >= prefix, masks[m, tail], 0.0).astype(np.float32))
        spans.append((start, start + len(tail)))
        start += len(tail)
    width = -(-start // ROW_QUANTUM) * ROW_QUANTUM
    ids = np.zeros(width, np.int32)
    pos = np.zeros(width, np.int32)
    answer = np.zeros(width, np.float32)
    ids[:start] = np.concatenate(pieces_ids)
    pos[:start] = np.concatenate(pieces_pos)
    answer[:start] = np.concatenate(pieces_mask)
    attend = np.zeros((width, width), bool)
    attend[:prefix, :prefix] = np.tril(np.ones((prefix, prefix), bool))
    for lo, hi in spans:
        attend[lo:hi, :prefix - overlap] = True
        attend[lo:hi, lo:hi] = np.tril(np.ones((hi - lo, hi - lo), bool))
    pad = np.arange(start, width)
    attend[pad, pad] = True  # padding attends itself only: no empty softmax rows
    return ids, pos, attend, answer


class PackedModel:
    """Upstream's network run on a packed row: its own embedding, engram, stack and tied head,
    with RoPE at the row's virtual positions and no sliding band (see the module docstring)."""

    def __init__(self, vocab_size, num_layers):
        self.model = SimpleAttentionNetwork(make_config(vocab_size, num_layers=num_layers, sliding_window=0))

    def logits(self, params, ids, pos, attend, quant):
        def forward(module, ids, pos, attend):
            cos, sin = module._rope(module.config.max_seq_len)
            mask = attend[None, None]
            x = module._input_embeddings(ids[None])
            engram_kv = module._engram_kv(ids[None], mask, quant)
            x, _ = module.stack(x, mask=mask, rope=(cos[pos], sin[pos]), engram_kv=engram_kv,
                                quant=quant)
            head = module.embedding.embedding
            if module.config.out_vocab:
                head = head[: module.config.out_vocab]
            return _aq(x, quant).astype(jnp.float32) @ head.T

        return self.model.apply({"params": params}, ids, pos, attend, method=forward)[0]


def packed_answer_ce(packed_model, params, ids, pos, attend, answer, quant):
    """(sum of answer-token cross-entropies, answer-token count) of a packed row; the prediction of
    token t+1 comes from token t, which in a member's span is always its own previous token."""
    logits = packed_model.logits(params, ids, pos, attend, quant)
    ce = optax.softmax_cross_entropy_with_integer_labels(logits[:-1], ids[1:])
    return (ce * answer[1:]).sum(), answer[1:].sum()

