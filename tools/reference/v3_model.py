"""Needle 3 containers from upstream's own code: random parameters, export with
chosen CQ widths, and the parameters a runtime sees when it reads one back.

Shared by v3_fixtures.py and shipped_geometry.py. Import after common.setup_jax().
"""
import contextlib
import types

import numpy as np
import jax
import jax.numpy as jnp

from needle.model import architecture as A
from needle.model import export as E
from needle.model import quantize as Q

HEAD_METHODS = {"embedding": "forward_embedding", "confidence": "forward_confidence",
                "router": "forward_router"}
# Record width 5 means ternary; upstream's quantiser calls that width 1.58.
TERNARY = E.TERNARY_RECORD_BITS
WIDTHS = (1, 2, 3, 4, TERNARY)


def make_config(kwargs):
    """Upstream's config in float32 without rematerialisation."""
    return A.TransformerConfig(**{"dtype": "float32", "remat": False, **kwargs})


# --------------------------------------------------------------- parameters

def initializer(config, heads):
    """seed -> upstream's init, traced through every requested probe head so that
    those heads get parameters (an init through __call__ alone creates none).
    Compiled once; call it with as many seeds as needed."""
    model = A.SimpleAttentionNetwork(config)
    tokens = jnp.arange(1, 9, dtype=jnp.int32)[None]

    def touch(module, tok):
        out = module(tok)
        for head in heads:
            getattr(module, HEAD_METHODS[head])(tok)
        return out

    init = jax.jit(lambda key: model.init(key, tokens, method=touch))
    return lambda seed: jax.tree_util.tree_map(
        np.asarray, dict(init(jax.random.PRNGKey(seed))["params"]))


def _path(path):
    return "/".join(str(getattr(p, "key", p)) for p in path)


_WALSH = ("w1a", "w1b", "w2a", "w2b", "w3a", "w3b")
_RANDOM = ("embedding", "kernel", "probes", "query", "mhc_phi_pre", "mhc_phi_post", "mhc_phi_res")


def _undegenerate(path, a, rng):
    """Move one leaf off upstream's constant or structured init (see README)."""
    last = path.rsplit("/", 1)[-1]
    noise = lambda s: (s * rng.standard_normal(a.shape)).astype(np.float32)
    if path == "stack/final_norm/scale":
        return 4.0 + noise(0.3)           # gain ~5: wide, robust argmax margins
    if last == "scale":
        return a + noise(0.15)
    if last in ("q_taps", "k_taps", "v_taps", "taps"):
        return a + noise(0.25)
    if last == "attn_gate":
        return noise(0.5)
    if last in ("d1", "d2", "d3"):
        return a + noise(0.2)
    if last == "d4":
        return 0.3 * (1 + noise(0.3))     # 0.02 would mute the Hadamard MLP
    if last in ("b2",):
        return noise(0.2)
    if last in _WALSH:
        return a + np.abs(a) * noise(0.2)
    if last == "cond_u":
        return noise(0.3)
    if last == "cond_v":
        return a * 5                      # a flat softmax would hide the conditioning
    if last in ("mhc_a_pre", "mhc_a_post", "mhc_a_res"):
        return rng.uniform(0.5, 1.5, a.shape).astype(np.float32)
    if last == "mhc_b_pre":
        return noise(0.5)
    if last == "mhc_b_post":
        return 3.0 + noise(0.3)           # lanes write back strongly
    if last == "mhc_b_res":
        return a + noise(0.5)
    if last == "gain":
        return a + noise(0.2)
    if last == "row_bias":
        return noise(0.5)
    if last == "bias" and path.endswith("proj/bias"):
        return noise(0.2)
    if path.startswith("embedding_head/") and last in ("log_temp", "bias"):
        return a                          # not exported, not used by forward_embedding
    if path == "embedding/embedding":
        return a * 0.25                   # a weaker residual copy of the input token:
                                          # greedy output then varies instead of repeating
    if last in _RANDOM:
        return a
    raise KeyError(f"no rule moves {path} off its init")


def undegenerate(params, seed):
    """Deterministically perturb every constant/structured leaf; random leaves stay."""
    rng = np.random.RandomState(seed)
    flat = jax.tree_util.tree_flatten_with_path(params)[0]
    out = {}
    for path, leaf in sorted(flat, key=lambda pl: _path(pl[0])):
        out[_path(path)] = np.asarray(_undegenerate(_path(path), np.asarray(leaf, np.float32), rng),
                                      np.float32)
    return jax.tree_util.tree_map_with_path(lambda p, _: out[_path(p)], params)


# ------------------------------------------------------------------ export

def cq_pack(w, bits, group):
    """CQ-pack a [out, in] matrix at record width `bits` (1..4, or 5 = ternary).

    Same recipe as upstream's 4-bit `_cq_pack` (pad, Walsh-rotate each group,
    split off the FP16 group norm, nearest codebook level), with the layouts
    upstream's reader `_cq_unpack` expects for the other widths: LSB-first
    `bits`-wide indices, and for ternary 2-bit crumbs coding trits 0,1,2 as 3,0,1.
    """
    cb = Q._cq_codebook_np(Q.TERNARY_BITS if bits == TERNARY else bits, group)
    H = Q._cq_hadamard_np(group)
    out, D = w.shape
    pad = (-D) % group
    wp = np.pad(w, ((0, 0), (0, pad))) if pad else w
    in_pad = wp.shape[1]
    rot = wp.reshape(out, in_pad // group, group).astype(np.float32) @ H
    norm = np.sqrt((rot ** 2).sum(-1, keepdims=True))
    unit = rot / np.maximum(norm, 1e-12)
    idx = E._nearest_idx(unit, cb).reshape(out, in_pad)
    if bits == TERNARY:
        packed = E._pack_lsb(np.array([3, 0, 1], np.uint8)[idx], 2)
    else:
        packed = E._pack_lsb(idx, bits)
    return packed, norm[:, :, 0].astype(np.float16)


class WidthPlan:
    """Chooses each CQ matrix's width: `fixed` names first, probe-head matrices
    at upstream's HEAD_BITS, the rest cycling through `cycle` in canon order."""

    def __init__(self, cycle=(4,), fixed=None):
        self.cycle, self.fixed, self.n = tuple(cycle), dict(fixed or {}), 0

    def __call__(self, name):
        if name in self.fixed:
            return self.fixed[name]
        if "_head." in name:
            return Q.HEAD_BITS
        bits = self.cycle[self.n % len(self.cycle)]
        self.n += 1
        return bits


@contextlib.contextmanager
def _patched(module, **attrs):
    saved = {k: getattr(module, k) for k in attrs}
    for k, v in attrs.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(module, k, v)


def write_container(params, config, path, tokenizer_blob, group=128, plan=None):
    """Upstream's write_export; with a plan, its `_q` packs each matrix at the
    plan's width instead of 4 bits. Returns the tensor names in directory order."""
    names = []
    original = E._tensors

    def recording(*args, **kwargs):
        ts = original(*args, **kwargs)
        names[:] = [t.name for t in ts]
        return ts

    checked = []

    def q(name, mat, bits, grp):
        width = plan(name)
        packed, norms = cq_pack(np.asarray(mat, np.float32), width, grp)
        if width == E.WEIGHT_BITS and not checked:
            # The shared recipe must be upstream's own at the width upstream writes.
            ref_packed, ref_norms = E._cq_pack(np.asarray(mat, np.float32), width, grp)
            assert packed.tobytes() == ref_packed.tobytes() and norms.tobytes() == ref_norms.tobytes()
            checked.append(name)
        return E._Tensor(name, E.CQ, mat.shape, packed.tobytes() + norms.tobytes(), grp, width)

    patches = {"_tensors": recording}
    if plan is not None:
        patches["_q"] = q
    with _patched(E, **patches):
        E.write_export(params, config, path, bits=E.WEIGHT_BITS, group=group,
                       tokenizer=tokenizer_blob)
    return names + ["tokenizer"]


def tokenizer_blob(sp):
    """Upstream's tokenizer attachment for a SentencePiece processor."""
    return E._tokenizer_blob(types.SimpleNamespace(sp=sp))


def directory(path):
    """The container's directory records, as read straight from the file."""
    with open(path, "rb") as f:
        raw = f.read()
    num = E.struct.unpack_from(E._HDR_FMT, raw, 0)[1]
    cb_n = E.struct.unpack_from(E._HDR_FMT, raw, 0)[2]
    off = E.struct.calcsize(E._HDR_FMT) + cb_n * 4
    out = []
    for _ in range(num):
        rec = E.struct.unpack_from(E._REC_FMT, raw, off)
        off += E.REC_SIZE
        out.append({"dtype": rec[0], "shape": list(rec[3:3 + rec[1]]),
                    "offset": rec[7], "nbytes": rec[8], "group": rec[9], "bits": rec[10]})
    return out


# ------------------------------------------------------------ read back

_BLOCK = {"norm_in": ("ZCRMSNorm_0", "scale"), "post_norm": ("post_attn_norm", "scale"),
          "pre_hada": ("pre_hada_norm", "scale"), "attn_gate": ("attn_gate",)}
_ATTN_MATRICES = ("q_proj", "k_proj", "v_proj", "gate_proj", "out_proj")
_HADA = ("d1", "d2", "b2", "d3", "d4", "w1a", "w1b", "w2a", "w2b", "w3a", "w3b", "cond_v", "cond_u")


def _set(tree, keys, value, layer=None):
    node = tree
    for k in keys[:-1]:
        node = node[k]
    if layer is None:
        assert node[keys[-1]].shape == value.shape, (keys, node[keys[-1]].shape, value.shape)
        node[keys[-1]] = value
    else:
        target = node[keys[-1]]
        assert target[layer].shape == value.shape, (keys, target[layer].shape, value.shape)
        target[layer] = value


def _destination(name):
    """(param path, layer index or None, transform) for one container tensor."""
    if name.startswith("layer"):
        layer, field = int(name[5:7]), name[8:]
        block = ("stack", "layers", "block")
        if field in _BLOCK:
            shape_fix = (lambda a: a.reshape(())) if field == "attn_gate" else None
            return block + _BLOCK[field], layer, shape_fix
        if field in _ATTN_MATRICES:
            return block + ("self_attn", field, "kernel"), layer, np.transpose
        if field in ("q_taps", "k_taps", "v_taps"):
            return block + ("self_attn", field), layer, None
        if field in ("q_norm", "k_norm"):
            return block + ("self_attn", field, "scale"), layer, None
        if field in _HADA:
            return block + ("hadamard_mlp", field), layer, None
    if name.startswith("mhc_"):
        return ("stack", name), None, None
    if name.startswith("engram"):
        site, field = name[6:].split(".")
        key = f"engrams_{int(site)}"
        if field in ("key_proj", "value_proj"):
            return (key, field, "kernel"), None, np.transpose
        return (key, {"tables": "embedding", "taps": "taps"}[field]), None, None
    if name == "final_norm":
        return ("stack", "final_norm", "scale"), None, None
    if name == "embedding":
        return ("embedding", "embedding"), None, None
    if "_head." in name:
        key, field = name.split(".")
        if field == "proj":
            return (key, "proj", "kernel"), None, np.transpose
        if field == "bias":
            return (key, "proj", "bias"), None, None
        return (key, field), None, None
    raise KeyError(name)


def read_params(path, names, template, config):
    """The flax parameters a runtime sees in `path`: upstream's read_export
    (CQ dequantised, FP16 rounded) mapped back onto the parameter tree.

    `template` supplies the tree shape and the two embedding-head scalars the
    container does not carry. Every other leaf must come from the file.
    """
    header, tensors = E.read_export(path)
    params = jax.tree_util.tree_map(lambda a: np.array(a, np.float32, copy=True), template)
    for name, value in zip(names, tensors):
        if name in ("hada_p1", "hada_p2", "heads.manifest", "tokenizer") or name.endswith(".calibration"):
            continue
        if name == "embedding_head.bias":
            continue                       # a zero placeholder: the embedding projection has no bias
        keys, layer, fix = _destination(name)
        value = np.asarray(value, np.float32)
        target = params
        for k in keys:
            target = target[k]
        shape = target.shape[1:] if layer is not None else target.shape
        if keys[-1].startswith("mhc_phi"):
            L, nC, lanes = shape
            value = value.reshape(L, lanes, nC).transpose(0, 2, 1)
        elif fix is not None:
            value = fix(value)
        value = value.reshape(shape)
        _set(params, keys, value, layer)
    _check_read_back(params, config, names, tensors)
    return header, params


def _check_read_back(params, config, names, tensors):
    """Upstream's own export walk over the rebuilt parameters must reproduce
    every tensor that read_export returned: the inverse mapping is exact."""
    captured = []

    def q(name, mat, bits, group):
        captured.append((name, "cq", np.asarray(mat, np.float32)))
        return E._Tensor(name, E.CQ, mat.shape, b"")

    def fp16(name, arr):
        captured.append((name, "fp16", np.asarray(arr, np.float16).astype(np.float32)))
        return E._Tensor(name, E.FP16, np.shape(arr), b"")

    with _patched(E, _q=q, _fp16=fp16):
        E._tensors(params, config, E.WEIGHT_BITS, 128)
    by_name = dict(zip(names, tensors))
    for name, _, value in captured:
        if name.endswith(".calibration") or name == "embedding_head.bias":
            continue
        want = np.asarray(by_name[name], np.float32)
        if not np.array_equal(value.reshape(want.shape), want):
            raise AssertionError(f"read-back mismatch in {name}")
    perms = A._hada_perms(1 << (config.d_model - 1).bit_length(),
                          bool(getattr(config, "ladder_widths", ())))
    for name, perm in zip(("hada_p1", "hada_p2"), perms):
        assert np.array_equal(np.asarray(by_name[name]), np.asarray(perm, np.float32)), name

