// The mHC lane mean, one invocation per element. (The RMS norms run inside the rotation that
// feeds each projection: `rotate` in hadamard.wgsl.)

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
