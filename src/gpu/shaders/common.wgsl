// Shared by every kernel family: one bind group layout for all pipelines. Every dispatch gets
// its own 256-byte parameter slot (dynamic offset) of offsets and sizes, so the kernels address
// one weights buffer, one activations buffer and one sequence-state buffer by offsets.

struct Params { v: array<vec4<u32>, 16> }

@group(0) @binding(0) var<uniform> P: Params;
// The whole container's bytes: CQ codes and FP16 group norms, read in place.
@group(0) @binding(1) var<storage, read> codes: array<u32>;
// Float weights widened at load (gains, taps, biases, code tables, MLP factors).
@group(0) @binding(2) var<storage, read> wf: array<f32>;
// The chunk's activations (one region per buffer of the CPU scratch).
@group(0) @binding(3) var<storage, read_write> act: array<f32>;
// What the sequence carries between steps: KV rings, conv and Engram tails (f32 as bits, int8
// codes four to a word).
@group(0) @binding(4) var<storage, read_write> st: array<u32>;
// The chunk header (tokens, first position, first head row) then ids and Engram slots.
@group(0) @binding(5) var<storage, read> ids: array<u32>;

const WG: u32 = 64u;
const NONE: u32 = 0xffffffffu;

fn pu(i: u32) -> u32 { return P.v[i / 4u][i % 4u]; }
fn pf(i: u32) -> f32 { return bitcast<f32>(pu(i)); }
// Tokens in the chunk, its first position, the first row the head runs on.
fn chunk_len() -> u32 { return ids[0]; }
fn first_pos() -> u32 { return ids[1]; }
fn head_first() -> u32 { return ids[2]; }

// The global invocation index over a 2-D grid of workgroups (x up to 65535 of them).
fn flat(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }

fn sigmoid(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }

fn stf(i: u32) -> f32 { return bitcast<f32>(st[i]); }
fn set_stf(i: u32, v: f32) { st[i] = bitcast<u32>(v); }

// `1 / sqrt(mean(x^2) + eps)` of act[base ..][.. n].
fn inv_rms(base: u32, n: u32, eps: f32) -> f32 {
    var s = 0.0;
    for (var i = 0u; i < n; i++) { let v = act[base + i]; s += v * v; }
    return 1.0 / sqrt(s * (1.0 / f32(n)) + eps);
}

// Tokens a dispatch runs over: the chunk, or (param 60 set) the rows the head reads out.
fn ntok() -> u32 {
    if pu(60u) == 1u { return chunk_len() - head_first(); }
    return chunk_len();
}
// Chunk row of a dispatch's token 0: param 61 set reads from the head's first row.
fn tshift() -> u32 {
    if pu(61u) == 1u { return head_first(); }
    return 0u;
}
