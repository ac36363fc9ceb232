// The residual adds and the Walsh-Monarch MLP (v3/mlp): conditioning, three Kronecker stages
// `Z -> Aᵀ Z B` around diagonals and the two fixed permutations.

// `x += g · rmsnorm(h)`, then `normed = rmsnorm(x)` (the MLP input), per token.
// params: 0 h, 1 x, 2 normed, 3 d, 4 post norm, 5 pre-hada norm, 6 attn gate (f32), 7 eps
@compute @workgroup_size(64)
fn post_residual(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = flat(gid, nwg);
    if t >= ntok() { return; }
    let d = pu(3u); let h = pu(0u) + t * d; let x = pu(1u) + t * d; let nm = pu(2u) + t * d;
    let ih = inv_rms(h, d, pf(7u));
    for (var c = 0u; c < d; c++) {
        act[x + c] += pf(6u) * ((wf[pu(4u) + c] * act[h + c]) * ih);
    }
    let ix = inv_rms(x, d, pf(7u));
    for (var c = 0u; c < d; c++) { act[nm + c] = (wf[pu(5u) + c] * act[x + c]) * ix; }
}

// Conditioning weights `softmax(x · cond_v)`, per token. params: 0 x, 1 d, 2 cond_vt, 3 rank, 4 out
@compute @workgroup_size(64)
fn cond_logits(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = flat(gid, nwg);
    if t >= ntok() { return; }
    let d = pu(1u); let rank = pu(3u); let o = pu(4u) + t * rank;
    var mx = bitcast<f32>(0xff7fffffu);
    for (var r = 0u; r < rank; r++) {
        var s = 0.0;
        for (var c = 0u; c < d; c++) { s += act[pu(0u) + t * d + c] * wf[pu(2u) + r * d + c]; }
        act[o + r] = s;
        mx = max(mx, s);
    }
    var sum = 0.0;
    for (var r = 0u; r < rank; r++) { let e = exp(act[o + r] - mx); act[o + r] = e; sum += e; }
    for (var r = 0u; r < rank; r++) { act[o + r] *= 1.0 / sum; }
}

// `cond = 1 + w · cond_u` and `z = d1 ⊙ pad(x)`. params: 0 x, 1 d, 2 n, 3 weights, 4 rank,
// 5 cond_u, 6 d1, 7 cond, 8 z
@compute @workgroup_size(64)
fn mlp_in(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let d = pu(1u); let n = pu(2u); let rank = pu(4u);
    if idx >= ntok() * n { return; }
    let t = idx / n; let i = idx % n;
    var c = 0.0;
    for (var r = 0u; r < rank; r++) { c += act[pu(3u) + t * rank + r] * wf[pu(5u) + r * n + i]; }
    act[pu(7u) + t * n + i] = c + 1.0;
    act[pu(8u) + t * n + i] = select(0.0, wf[pu(6u) + i] * act[pu(0u) + t * d + i], i < d);
}

// `tmp = Z B` (Z: a x b per token). params: 0 z, 1 B (wf), 2 a, 3 b, 4 tmp
@compute @workgroup_size(64)
fn kron_right(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let a = pu(2u); let b = pu(3u); let n = a * b;
    if idx >= ntok() * n { return; }
    let t = idx / n; let i = (idx % n) / b; let k = idx % b;
    var s = 0.0;
    for (var j = 0u; j < b; j++) { s += act[pu(0u) + t * n + i * b + j] * wf[pu(1u) + j * b + k]; }
    act[pu(4u) + t * n + i * b + k] = s;
}

// `out = Aᵀ tmp`. params: 0 A (wf), 1 tmp, 2 a, 3 b, 4 out
@compute @workgroup_size(64)
fn kron_left(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let a = pu(2u); let b = pu(3u); let n = a * b;
    if idx >= ntok() * n { return; }
    let t = idx / n; let k = (idx % n) / b; let l = idx % b;
    var s = 0.0;
    for (var i = 0u; i < a; i++) { s += wf[pu(0u) + i * a + k] * act[pu(1u) + t * n + i * b + l]; }
    act[pu(4u) + t * n + k * b + l] = s;
}

// Between stages: `z = silu(d2 ⊙ cond ⊙ u[p1] + b2)` (param 7 = 1) or `z = d3 ⊙ u[p2]`.
// params: 0 u, 1 n, 2 diagonal, 3 permutation (wf, as floats), 4 z, 5 cond, 6 b2, 7 first
@compute @workgroup_size(64)
fn mlp_mid(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let n = pu(1u);
    if idx >= ntok() * n { return; }
    let t = idx / n; let i = idx % n;
    let u = act[pu(0u) + t * n + u32(wf[pu(3u) + i])];
    if pu(7u) == 1u {
        let z = wf[pu(2u) + i] * act[pu(5u) + t * n + i] * u + wf[pu(6u) + i];
        act[pu(4u) + t * n + i] = z * sigmoid(z);
    } else {
        act[pu(4u) + t * n + i] = wf[pu(2u) + i] * u;
    }
}

// `x = (x + d4 ⊙ u) - u_in` (the block's output y). params: 0 u, 1 n, 2 d4, 3 x, 4 block input, 5 d
@compute @workgroup_size(64)
fn mlp_out(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let d = pu(5u); let n = pu(1u);
    if idx >= ntok() * d { return; }
    let t = idx / d; let c = idx % d;
    let m = wf[pu(2u) + c] * act[pu(0u) + t * n + c];
    let x = pu(3u) + t * d + c;
    act[x] = (act[x] + m) - act[pu(4u) + t * d + c];
}
