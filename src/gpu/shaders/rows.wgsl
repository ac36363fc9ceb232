// Moving rows: copies between activation regions and into the sequence's tails.

// params: 0 src, 1 src stride, 2 width, 3 dst, 4 dst stride
@compute @workgroup_size(64)
fn copy_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let w = pu(2u);
    if idx >= ntok() * w { return; }
    let t = idx / w; let c = idx % w;
    act[pu(3u) + t * pu(4u) + c] = act[pu(0u) + t * pu(1u) + c];
}

// A ring over positions (position p in slot p % slots) takes the rows of the chunk's last
// `slots` tokens. params: 0 src, 1 src stride, 2 width, 3 ring (st), 4 slots
@compute @workgroup_size(64)
fn tail_write(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let w = pu(2u); let b = chunk_len(); let slots = pu(4u);
    if idx >= b * w { return; }
    let t = idx / w; let c = idx % w;
    if t + slots < b { return; }
    let p = first_pos() + t;
    set_stf(pu(3u) + (p % slots) * w + c, act[pu(0u) + t * pu(1u) + c]);
}
