// mHC lanes (blocks/mhc): the Sinkhorn-routed coefficients, the read into the block input and
// the write-back into the lanes.

// log Σ exp over m[first + k · stride], k < n, shifted by the maximum (0 when not finite).
fn lse(m: ptr<function, array<f32, 64>>, first: u32, stride: u32, n: u32) -> f32 {
    var mx = bitcast<f32>(0xff7fffffu);
    var any_nan = false;
    for (var k = 0u; k < n; k++) {
        let v = (*m)[first + k * stride];
        if v != v { any_nan = true; }
        mx = max(mx, v);
    }
    let shift = select(0.0, mx, !any_nan && abs(mx) < bitcast<f32>(0x7f7fffffu));
    var s = 0.0;
    for (var k = 0u; k < n; k++) { s += exp((*m)[first + k * stride] - shift); }
    return log(s) + shift;
}

// One token's coefficients, in place: pre, post (n each), res (n x n, Sinkhorn-normalised).
// params: 0 pre, 1 post, 2 res, 3 n, 4 favoured lane, 5 a_pre, 6 a_post, 7 a_res (f32),
// 8 b_pre, 9 b_post, 10 b_res (wf)
@compute @workgroup_size(64)
fn coefficients(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = flat(gid, nwg);
    if t >= ntok() { return; }
    let n = pu(3u); let lane = pu(4u);
    let pre = pu(0u) + t * n; let post = pu(1u) + t * n; let res = pu(2u) + t * n * n;
    for (var j = 0u; j < n; j++) {
        let pre_off = select(-4.0, 4.0, j == lane);
        let post_off = select(-4.0, 0.0, j == lane);
        act[pre + j] = sigmoid(pf(5u) * act[pre + j] + wf[pu(8u) + j] + pre_off);
        act[post + j] = 2.0 * sigmoid(pf(6u) * act[post + j] + wf[pu(9u) + j] + post_off);
    }
    var m: array<f32, 64>;
    for (var i = 0u; i < n * n; i++) { m[i] = pf(7u) * act[res + i] + wf[pu(10u) + i]; }
    for (var it = 0u; it < 20u; it++) {
        for (var i = 0u; i < n; i++) {
            let l = lse(&m, i * n, 1u, n);
            for (var j = 0u; j < n; j++) { m[i * n + j] -= l; }
        }
        for (var j = 0u; j < n; j++) {
            let l = lse(&m, j, n, n);
            for (var i = 0u; i < n; i++) { m[i * n + j] -= l; }
        }
    }
    for (var i = 0u; i < n * n; i++) { act[res + i] = exp(m[i]); }
}

// Block input `u = Σ_i pre_i lane_i`, which also starts the residual x.
// params: 0 stream, 1 pre, 2 n, 3 d, 4 u, 5 x
@compute @workgroup_size(64)
fn collapse(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let n = pu(2u); let d = pu(3u);
    if idx >= ntok() * d { return; }
    let t = idx / d; let c = idx % d;
    var s = 0.0;
    for (var i = 0u; i < n; i++) { s += act[pu(1u) + t * n + i] * act[pu(0u) + (t * n + i) * d + c]; }
    act[pu(4u) + t * d + c] = s;
    act[pu(5u) + t * d + c] = s;
}

// `next_i = Σ_j res_ij lane_j + post_i · y` into the other stream region.
// params: 0 stream, 1 res, 2 post, 3 y, 4 next, 5 n, 6 d
@compute @workgroup_size(64)
fn expand(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let n = pu(5u); let d = pu(6u);
    if idx >= ntok() * n * d { return; }
    let t = idx / (n * d); let i = (idx / d) % n; let c = idx % d;
    var s = 0.0;
    for (var j = 0u; j < n; j++) {
        s += act[pu(1u) + (t * n + i) * n + j] * act[pu(0u) + (t * n + j) * d + c];
    }
    s += act[pu(2u) + t * n + i] * act[pu(3u) + t * d + c];
    act[pu(4u) + (t * n + i) * d + c] = s;
}
