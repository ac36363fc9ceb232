// Gated attention over the KV ring (blocks/attention, blocks/kv): the causal conv on q/k/v,
// per-head norms and RoPE, the ring write (f32, or int8 codes four to a word and one scale per
// (position, kv head)), then per (token, head) scores, softmax and the value mix, gated.

// The conv over the raw `[q | k | v]` rows: chunk tokens from the activations, earlier ones from
// the tail ring. params: 0 raw, 1 width, 2 taps (wf), 3 taps count, 4 window (0: none),
// 5 tail (st), 6 tail slots, 7 dst
@compute @workgroup_size(64)
fn qkv_conv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let w = pu(1u);
    if idx >= ntok() * w { return; }
    let t = idx / w; let c = idx % w;
    let p0 = first_pos(); let p = p0 + t; let win = pu(4u);
    var o = wf[pu(2u) + c] * act[pu(0u) + t * w + c];
    for (var j = 1u; j < pu(3u); j++) {
        if j > p || (win > 0u && j >= win) { break; }
        let q = p - j;
        var v: f32;
        if q >= p0 { v = act[pu(0u) + (q - p0) * w + c]; } else { v = stf(pu(5u) + (q % pu(6u)) * w + c); }
        o += wf[pu(2u) + j * w + c] * v;
    }
    act[pu(7u) + t * w + c] = o;
}

// Zero-centred RMS norm and RoPE of each q and k head, in place.
// params: 0 qkv, 1 width, 2 qk, 3 heads, 4 kv heads, 5 q gain, 6 k gain, 7 cos, 8 sin, 9 eps
@compute @workgroup_size(64)
fn qk_norm_rope(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let hs = pu(3u) + pu(4u); let qk = pu(2u);
    if idx >= ntok() * hs { return; }
    let t = idx / hs; let hd = idx % hs;
    let base = pu(0u) + t * pu(1u) + hd * qk;
    let gain = select(pu(6u), pu(5u), hd < pu(3u));
    let inv = inv_rms(base, qk, pf(9u));
    for (var i = 0u; i < qk; i++) { act[base + i] = (wf[gain + i] * act[base + i]) * inv; }
    let half = qk / 2u;
    for (var i = 0u; i < half; i++) {
        let cs = act[pu(7u) + t * half + i]; let sn = act[pu(8u) + t * half + i];
        let a = act[base + i]; let b = act[base + half + i];
        act[base + i] = a * cs - b * sn;
        act[base + half + i] = b * cs + a * sn;
    }
}

// The ring of one layer. params 6.. of kv_write and attend: 6 slots, 7 keys, 8 values,
// 9 key scales, 10 value scales (st), 11 int8
fn absmax_scale(base: u32, n: u32) -> f32 {
    var m = 0.0;
    for (var i = 0u; i < n; i++) { let a = abs(act[base + i]); if m < a { m = a; } }
    return scale_of_absmax(m);
}
// The int8 scale of values whose largest magnitude is `m` (1 for all zeros).
fn scale_of_absmax(m: f32) -> f32 { return select(1.0, m * (1.0 / 127.0), m > 0.0); }
fn code_of(v: f32, inv: f32) -> i32 { return i32(clamp(round(v * inv), -128.0, 127.0)); }
fn put_codes(src: u32, n: u32, dst: u32, scale: f32) {
    let inv = 1.0 / scale;
    for (var i = 0u; i < n; i += 4u) {
        var w = 0u;
        for (var l = 0u; l < 4u; l++) { w |= (u32(code_of(act[src + i + l], inv)) & 0xffu) << (8u * l); }
        st[dst + i / 4u] = w;
    }
}
fn code_at(base: u32, i: u32) -> i32 {
    return (i32(st[base + i / 4u] << (24u - 8u * (i % 4u)))) >> 24u;
}

// Writes each token's keys and values (per kv head) at slot p % slots.
// params: 0 qkv, 1 width, 2 qk, 3 v, 4 heads, 5 kv heads, 6..11 the ring
@compute @workgroup_size(64)
fn kv_write(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let kvh = pu(5u); let qk = pu(2u); let vw = pu(3u);
    if idx >= ntok() * kvh { return; }
    let t = idx / kvh; let h = idx % kvh;
    let s = (first_pos() + t) % pu(6u);
    let e = s * kvh + h;
    let k = pu(0u) + t * pu(1u) + pu(4u) * qk + h * qk;
    let v = pu(0u) + t * pu(1u) + (pu(4u) + kvh) * qk + h * vw;
    if pu(11u) == 1u {
        let ks = absmax_scale(k, qk); let vs = absmax_scale(v, vw);
        put_codes(k, qk, pu(7u) + e * qk / 4u, ks);
        put_codes(v, vw, pu(8u) + e * vw / 4u, vs);
        set_stf(pu(9u) + e, ks);
        set_stf(pu(10u) + e, vs);
    } else {
        for (var i = 0u; i < qk; i++) { set_stf(pu(7u) + e * qk + i, act[k + i]); }
        for (var i = 0u; i < vw; i++) { set_stf(pu(8u) + e * vw + i, act[v + i]); }
    }
}

// Scratch of an attend workgroup: reductions across its lanes, a tile's softmax weights, and the
// query's int8 codes.
var<workgroup> lanes_red: array<f32, 64>;
var<workgroup> tile_w: array<f32, 64>;
var<workgroup> q_codes: array<i32, 256>;

// `v` reduced over the workgroup's lanes as a tree: the largest (`largest`) or the sum. Each
// lane calls it, in uniform control flow.
fn wg_reduce(lane: u32, v: f32, largest: bool) -> f32 {
    lanes_red[lane] = v;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if lane < s {
            let a = lanes_red[lane]; let b = lanes_red[lane + s];
            lanes_red[lane] = select(a + b, max(a, b), largest);
        }
        workgroupBarrier();
    }
    let r = lanes_red[0];
    workgroupBarrier();
    return r;
}

// Channels a lane mixes (`v` up to 4 · 64, checked at load).
const LANE_CHANNELS: u32 = 4u;

// One workgroup per (token, query head), over the causal window's keys in tiles of 64: each lane
// scores one key of the tile (the serial dot product the CPU takes), the tile's max and the
// weights' sum are reduced across the lanes, and each lane carries its value channels' running
// mix, rescaled when the running max grows (an online softmax: no scores are stored, so no
// scratch grows with the context). Then the mix over the sum, gated.
// params: 0 qkv, 1 width, 2 qk, 3 v, 4 heads, 5 kv heads, 6..11 the ring, 12 window (0: none),
// 13 q factor, 14 score factor (f32), 15 out, 16 gate
@compute @workgroup_size(64)
fn attend(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let heads = pu(4u); let kvh = pu(5u); let qk = pu(2u); let vw = pu(3u);
    // From the workgroup's id (uniform), so the barriers below stay in uniform control flow.
    let job = wg.x + wg.y * nwg.x;
    if job >= ntok() * heads { return; }
    let t = job / heads; let hd = job % heads;
    let p = first_pos() + t; let win = pu(12u); let slots = pu(6u);
    var first = 0u;
    if win > 0u && p + 1u > win { first = p + 1u - win; }
    let keys = p + 1u - first;
    let h = hd / (heads / kvh);
    let q = pu(0u) + t * pu(1u) + hd * qk;
    let qf = pf(13u); let sf = pf(14u);
    let int8 = pu(11u) == 1u;
    var qs = 0.0;
    if int8 {
        var m = 0.0;
        for (var c = lane; c < qk; c += WG) { m = max(m, abs(act[q + c])); }
        let s = scale_of_absmax(wg_reduce(lane, m, true));
        let inv = 1.0 / s;
        for (var c = lane; c < qk; c += WG) { q_codes[c] = code_of(act[q + c], inv); }
        workgroupBarrier();
        qs = s * qf;
    }
    let lowest = bitcast<f32>(0xff7fffffu);
    var mx = lowest;
    var sum = 0.0;
    var acc: array<f32, LANE_CHANNELS>;
    for (var base = 0u; base < keys; base += WG) {
        let i = base + lane;
        var score = lowest;
        if i < keys {
            let e = ((first + i) % slots) * kvh + h;
            if int8 {
                var dp = 0;
                for (var c = 0u; c < qk; c++) { dp += q_codes[c] * code_at(pu(7u) + e * qk / 4u, c); }
                score = ((f32(dp) * qs) * stf(pu(9u) + e)) * sf;
            } else {
                var s = 0.0;
                for (var c = 0u; c < qk; c++) { s += (act[q + c] * qf) * stf(pu(7u) + e * qk + c); }
                score = s * sf;
            }
        }
        let top = max(mx, wg_reduce(lane, score, true));
        let rescale = exp(mx - top);
        mx = top;
        var w = 0.0;
        if i < keys { w = exp(score - mx); }
        tile_w[lane] = w;
        // The reduction's barriers also make every lane's weight visible below.
        sum = sum * rescale + wg_reduce(lane, w, false);
        let n = min(WG, keys - base);
        for (var k = 0u; k < LANE_CHANNELS; k++) {
            let c = lane + k * WG;
            if c >= vw { break; }
            var mix = 0.0;
            for (var j = 0u; j < n; j++) {
                let e = ((first + base + j) % slots) * kvh + h;
                if int8 {
                    mix += tile_w[j] * (f32(code_at(pu(8u) + e * vw / 4u, c)) * stf(pu(10u) + e));
                } else {
                    mix += tile_w[j] * stf(pu(8u) + e * vw + c);
                }
            }
            acc[k] = acc[k] * rescale + mix;
        }
    }
    let o = pu(15u) + t * heads * vw + hd * vw;
    let inv = 1.0 / sum;
    for (var k = 0u; k < LANE_CHANNELS; k++) {
        let c = lane + k * WG;
        if c >= vw { break; }
        act[o + c] = (acc[k] * inv) * sigmoid(act[pu(16u) + t * heads * vw + hd * vw + c]);
    }
}
