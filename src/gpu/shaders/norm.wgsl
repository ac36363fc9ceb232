// RMS norms (kernels/norm) and the mHC lane mean, one invocation per token (or element).

// `dst = (gain ⊙ src) · inv_rms(src)`, or `src · inv_rms(src)` when gain is NONE.
// params: 0 src, 1 src stride, 2 n, 3 gain (wf or NONE), 4 dst, 5 dst stride, 6 eps
@compute @workgroup_size(64)
fn rms_norm(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = flat(gid, nwg);
    if t >= ntok() { return; }
    let n = pu(2u); let src = pu(0u) + t * pu(1u); let dst = pu(4u) + t * pu(5u);
    let inv = inv_rms(src, n, pf(6u));
    let gain = pu(3u);
    for (var i = 0u; i < n; i++) {
        if gain == NONE {
            act[dst + i] = act[src + i] * inv;
        } else {
            act[dst + i] = (wf[gain + i] * act[src + i]) * inv;
        }
    }
}

// The mean over lanes of each token's stream. params: 0 stream, 1 lanes, 2 d, 3 dst, 4 dst stride
@compute @workgroup_size(64)
fn lane_mean(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let n = pu(1u); let d = pu(2u);
    if idx >= ntok() * d { return; }
    let t = idx / d; let c = idx % d;
    let src = pu(0u) + (t + tshift()) * n * d + c;
    var s = 0.0;
    for (var l = 0u; l < n; l++) { s += act[src + l * d]; }
    act[pu(3u) + t * pu(4u) + c] = s * (1.0 / f32(n));
}
