// The orthonormal Walsh-Hadamard transform (kernels/hadamard) and the CQ input rotation.

// In-place orthonormal FWHT of act[base .. base + n): stages from stride 1 up, then the scale.
fn fwht_act(base: u32, n: u32, scale: f32) {
    var h = 1u;
    loop {
        if h >= n { break; }
        for (var blk = 0u; blk < n; blk += 2u * h) {
            for (var i = blk; i < blk + h; i++) {
                let p = act[base + i];
                let q = act[base + i + h];
                act[base + i] = p + q;
                act[base + i + h] = p - q;
            }
        }
        h *= 2u;
    }
    for (var i = 0u; i < n; i++) { act[base + i] = act[base + i] * scale; }
}

// Each group of a token's input (zero-padded to the padded width) replaced by its transform.
// With param 7 set the input is first RMS-normed, `(gain ⊙ x) · inv_rms(x)` or `x · inv_rms(x)`
// when the gain is NONE (blocks' rmsnorm, with the CPU's operations, so the same bits): the norm
// fused into the projection it feeds, its rows never written.
// params: 0 src, 1 src stride, 2 cols, 3 cols padded, 4 group, 5 dst, 6 scale (f32), 7 norm,
// 8 gain (wf or NONE), 9 eps
@compute @workgroup_size(64)
fn rotate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let cols = pu(2u); let cp = pu(3u); let g = pu(4u);
    let groups = cp / g;
    if idx >= ntok() * groups { return; }
    let t = idx / groups; let gi = idx % groups;
    let row = pu(0u) + t * pu(1u);
    let src = row + gi * g;
    let dst = pu(5u) + t * cp + gi * g;
    let norm = pu(7u) == 1u; let gain = pu(8u);
    var inv = 1.0;
    if norm { inv = inv_rms(row, cols, pf(9u)); }
    for (var i = 0u; i < g; i++) {
        let c = gi * g + i;
        var v = select(0.0, act[src + i], c < cols);
        if norm && c < cols {
            if gain == NONE { v = v * inv; } else { v = (wf[gain + c] * v) * inv; }
        }
        act[dst + i] = v;
    }
    fwht_act(dst, g, pf(6u));
}

