// Engram sites (blocks/engram): the gate on the block input and the dilated conv of the
// values; memory rows are gathered by cq.wgsl's gather_rows from slots hashed on the CPU.

// `alpha = sigmoid(rms_unit(x) · rms_unit(k) / sqrt(d))` per token.
// params: 0 x, 1 k, 2 d, 3 alpha, 4 eps
@compute @workgroup_size(64)
fn engram_gate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = flat(gid, nwg);
    if t >= ntok() { return; }
    let d = pu(2u); let x = pu(0u) + t * d; let k = pu(1u) + t * d;
    let ix = inv_rms(x, d, pf(4u)); let ik = inv_rms(k, d, pf(4u));
    var s = 0.0;
    for (var c = 0u; c < d; c++) { s += (act[x + c] * ix) * (act[k + c] * ik); }
    act[pu(3u) + t] = sigmoid(s / sqrt(f32(d)));
}

// `contrib (+)= alpha · Σ_j taps_j ⊙ v_{p - j·dilation}`: values of the chunk's tokens from the
// activations, earlier ones from the site's tail ring. The block's last site adds the sites' sum
// into the residual `x` itself (the residual add fused: no copy after it).
// params: 0 v, 1 d, 2 taps (wf), 3 taps count, 4 dilation, 5 tail (st), 6 tail slots, 7 alpha,
// 8 contrib, 9 first site (1: contrib =), 10 x (the last site), else NONE
@compute @workgroup_size(64)
fn engram_conv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let d = pu(1u);
    if idx >= ntok() * d { return; }
    let t = idx / d; let c = idx % d;
    let p0 = first_pos(); let p = p0 + t;
    var o = wf[pu(2u) + c] * act[pu(0u) + t * d + c];
    for (var j = 1u; j < pu(3u); j++) {
        let back = j * pu(4u);
        if back > p { break; }
        let q = p - back;
        var v: f32;
        if q >= p0 { v = act[pu(0u) + (q - p0) * d + c]; } else { v = stf(pu(5u) + (q % pu(6u)) * d + c); }
        o += wf[pu(2u) + j * d + c] * v;
    }
    let a = act[pu(7u) + t];
    let dst = pu(8u) + t * d + c;
    let sum = select(act[dst] + a * o, a * o, pu(9u) == 1u);
    if pu(10u) == NONE {
        act[dst] = sum;
    } else {
        let x = pu(10u) + t * d + c;
        act[x] = act[x] + sum;
    }
}
