"""The default model's geometry, parameter initialisation, and container <-> params.

`params_from_export` inverts upstream's `export._tensors` walk, so a `.cact` can be
run by upstream's flax model exactly as a runtime sees it (CQ-dequantised weights).
"""
import jax
import jax.numpy as jnp
import numpy as np
from needle.model.architecture import SimpleAttentionNetwork, TransformerConfig, engram_geometry

GEOMETRY = dict(d_model=128, num_layers=4, num_heads=4, num_kv_heads=2, qk_head_dim=32,
                v_head_dim=32, max_seq_len=1024, engram_layers=(1,), engram_slots=512,
                engram_orders=(2, 3), sliding_window=1024, global_layers=(3,), mhc_lanes=4,
                qkv_conv_taps=3, kv_bits=8, act_bits=8)


def make_config(vocab_size, **overrides):
    fields = dict(GEOMETRY, vocab_size=vocab_size, dtype="float32", remat=False, flash=False)
    fields.update(overrides)
    return TransformerConfig(**fields)


def init_params(config, seed=0):
    model = SimpleAttentionNetwork(config)
    tokens = jnp.zeros((1, 16), jnp.int32)
    return model, model.init(jax.random.PRNGKey(seed), tokens)["params"]


def num_layers_of(params):
    return int(np.shape(params["stack"]["mhc_a_pre"])[0])


def deepen(params, num_layers, opening=0.0):
    """Append layers to a trained stack without changing what it computes (phase 20).

    Each layer reads and writes its own mHC lane (layer index mod lanes), so the trained layers
    keep their places and the new ones go on top. A new layer starts as a copy of a trained one
    (block weights from the layer as far below it as the stack grows, mHC weights from the last
    trained layer on its lane) with both residual branches switched off: the post-attention norm
    scale at -1 (the norm multiplies by 1 + scale) and the MLP's output diagonal d4 at 0. The
    layer then adds nothing, and its lane mixing (doubly stochastic) leaves the lane mean, which
    is what the head reads, unchanged. Both switches get gradients, so training opens them.
    `opening` in (0, 1] instead starts both branches at that fraction of the copied layer's
    (phase 23: switched-off layers barely open within a short run), changing the function.
    """
    old = num_layers_of(params)
    lanes = int(np.shape(params["stack"]["mhc_b_pre"])[1])
    if not old < num_layers <= 2 * old or lanes > old or not 0 <= opening <= 1:
        raise ValueError(f"cannot deepen {old} layers ({lanes} lanes) to {num_layers} (opening {opening})")
    new = range(old, num_layers)
    block_src = [p - (num_layers - old) for p in new]
    lane_src = [max(l for l in range(old) if l % lanes == p % lanes) for p in new]

    def grow(a, src):
        a = np.asarray(a)
        return np.concatenate([a, a[src]], axis=0)

    params = jax.tree.map(np.asarray, params)
    stack = dict(params["stack"])
    block = jax.tree.map(lambda a: grow(a, block_src), stack["layers"]["block"])
    block["post_attn_norm"]["scale"][old:] = opening * (1 + block["post_attn_norm"]["scale"][old:]) - 1
    block["hadamard_mlp"]["d4"][old:] *= opening
    stack["layers"] = {"block": block}
    for name in [k for k in stack if k.startswith("mhc_")]:
        stack[name] = grow(stack[name], lane_src)
    return jax.tree.map(jnp.asarray, dict(params, stack=stack))


def widen_vocab(params, sources):
    """Append one embedding row per new piece (extend_vocab.py): the mean of the rows of the old
    pieces its text was cut into. The head is the embedding (tied), so a new piece's logit starts
    as the mean of its old pieces' logits, and text the old model wrote it can still write."""
    if not all(sources):
        raise ValueError("a new piece with no old pieces")
    embedding = np.asarray(params["embedding"]["embedding"])
    rows = [embedding[ids].mean(axis=0) for ids in sources]
    widened = np.concatenate([embedding, np.stack(rows).astype(embedding.dtype)], axis=0)
    return dict(params, embedding=dict(params["embedding"], embedding=jnp.asarray(widened)))


def config_from_header(header):
    keep = ("vocab_size", "out_vocab", "d_model", "num_heads", "num_kv_heads", "num_layers",
            "qk_head_dim", "v_head_dim", "max_seq_len", "mhc_lanes", "sliding_window",
            "global_layers", "qkv_conv_taps", "engram_slots", "engram_seed_heads", "engram_orders",
            "engram_layers", "rope_theta", "kv_bits")
    fields = {k: header[k] for k in keep if k in header}
    fields.update(dtype="float32", remat=False, flash=False)
    return TransformerConfig(**fields)


def params_from_export(header, tensors):
    """Rebuild the flax parameter tree from `read_export`'s tensor list."""
    config = config_from_header(header)
    model, template = init_params(config)
    params = jax.tree.map(np.array, template)
    it = iter(tensors)
    take = lambda: np.asarray(next(it), np.float32)  # noqa: E731
    params["embedding"]["embedding"] = take()
    block = params["stack"]["layers"]["block"]
    sa, ha = block["self_attn"], block["hadamard_mlp"]
    for i in range(config.num_layers):
        block["ZCRMSNorm_0"]["scale"][i] = take()
        for name in ("q_proj", "k_proj", "v_proj"):
            sa[name]["kernel"][i] = take().T
        if config.qkv_conv_taps:
            for name in ("q_taps", "k_taps", "v_taps"):
                sa[name][i] = take()
        sa["q_norm"]["scale"][i] = take()
        sa["k_norm"]["scale"][i] = take()
        sa["gate_proj"]["kernel"][i] = take().T
        sa["out_proj"]["kernel"][i] = take().T
        block["post_attn_norm"]["scale"][i] = take()
        block["attn_gate"][i] = take().reshape(block["attn_gate"][i].shape)
        block["pre_hada_norm"]["scale"][i] = take()
        for name in ("d1", "d2", "b2", "d3", "d4", "w1a", "w1b", "w2a", "w2b", "w3a", "w3b",
                     "cond_v", "cond_u"):
            ha[name][i] = take()
    stack = params["stack"]
    for name in ("mhc_a_pre", "mhc_a_post", "mhc_a_res", "mhc_b_pre", "mhc_b_post", "mhc_b_res"):
        stack[name] = take().reshape(stack[name].shape)
    for name in ("mhc_phi_pre", "mhc_phi_post", "mhc_phi_res"):
        L, n_c, lanes = stack[name].shape
        stack[name] = take().reshape(L, lanes, n_c).transpose(0, 2, 1)
    take(), take()  # hada_p1, hada_p2: fixed permutations, not parameters
    _, heads, sub_dim = engram_geometry(config)
    for s in range(len(config.engram_layers)):
        eg = params[f"engrams_{s}"]
        eg["embedding"] = take().reshape(eg["embedding"].shape)
        eg["key_proj"]["kernel"] = take().T
        eg["value_proj"]["kernel"] = take().T
        eg["taps"] = take()
    stack["final_norm"]["scale"] = take()
    return model, config, jax.tree.map(jnp.asarray, params)
