
// The decode projection with a subgroup reduction (the `subgroup` kernels; compiled only on a
// device with wgpu's SUBGROUP). Appended to cq.wgsl and cq_tiled.wgsl, whose code readers and
// workgroup code table it shares. Natively naga takes subgroup operations without WGSL's
// `enable subgroups;` (it refuses that directive as unimplemented).
//
// `matvec_tiled`'s grid (a workgroup per MV_ROWS rows), but each row is one subgroup's: its lanes
// stride over the row eight codes at a time and `subgroupAdd` sums them, with no workgroup
// memory or barrier after the table. Any subgroup size works: a workgroup's subgroups take its
// rows in turn (lavapipe's 8 lanes: four of the eight subgroups idle; 32 lanes: two rows each;
// 64: one subgroup, four rows).
@compute @workgroup_size(64)
fn matvec_subgroup(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) nsg: u32,
    @builtin(subgroup_invocation_id) sub: u32,
    @builtin(subgroup_size) width: u32,
) {
    load_table(lane);
    let rows = pu(6u); let bits = pu(2u); let mask = (1u << bits) - 1u;
    let groups = pu(4u); let g = pu(5u); let cp = groups * g;
    let r0 = (wg.x + wg.y * nwg.x) * MV_ROWS;
    // The row index is uniform across a subgroup, so every lane of it reaches `subgroupAdd`.
    for (var i = sg; i < MV_ROWS && r0 + i < rows; i += nsg) {
        let r = r0 + i;
        for (var t = 0u; t < ntok(); t++) {
            let xr = pu(8u) + t * cp;
            var acc = 0.0;
            for (var k = sub * 8u; k < cp; k += width * 8u) {
                let v = cq_codes8(pu(0u), pu(1u), bits, r, k);
                var s = 0.0;
                for (var j = 0u; j < 8u; j++) {
                    s += cq_tab[(v >> (j * bits)) & mask] * act[xr + k + j];
                }
                acc += s * cq_norm(pu(3u) + r * groups + k / g);
            }
            let sum = subgroupAdd(acc);
            if sub == 0u { act[pu(9u) + t * pu(10u) + r] = sum; }
        }
    }
}
