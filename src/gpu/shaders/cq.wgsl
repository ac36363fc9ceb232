// Cactus-Quants projections (kernels/cq): each input rotated once per group by the orthonormal
// Hadamard, then `out[r] = Σ_g norm[r, g] · Σ_k table[code[r, k]] · xr[k]`, four running sums a
// row as the CPU kernel keeps them. Codes and FP16 norms are read from the container bytes.

// A CQ matrix: params 0..8 of a matmul slot.
fn cq_code(base_bit: u32, row_bits: u32, bits: u32, r: u32, k: u32) -> u32 {
    let p = base_bit + r * row_bits + k * bits;
    let w = p >> 5u;
    let s = p & 31u;
    var v = codes[w] >> s;
    if s + bits > 32u { v |= codes[w + 1u] << (32u - s); }
    return v & ((1u << bits) - 1u);
}

fn cq_norm(half: u32) -> f32 {
    let pair = unpack2x16float(codes[half >> 1u]);
    return select(pair.x, pair.y, (half & 1u) == 1u);
}

// params: 0 code base bit, 1 row bits, 2 bits, 3 norm base (halves), 4 groups a row, 5 group,
// 6 rows, 7 code table (wf), 8 rotated input (cols padded a token), 9 out, 10 out stride
@compute @workgroup_size(64)
fn matmul(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let rows = pu(6u);
    if idx >= ntok() * rows { return; }
    let t = idx / rows; let r = idx % rows;
    let base = pu(0u); let row_bits = pu(1u); let bits = pu(2u);
    let groups = pu(4u); let g = pu(5u); let tab = pu(7u);
    let xr = pu(8u) + t * groups * g;
    var acc = vec4<f32>(0.0);
    for (var gi = 0u; gi < groups; gi++) {
        var s = vec4<f32>(0.0);
        for (var k = 0u; k < g; k += 4u) {
            let kk = gi * g + k;
            for (var l = 0u; l < 4u; l++) {
                s[l] += wf[tab + cq_code(base, row_bits, bits, r, kk + l)] * act[xr + kk + l];
            }
        }
        acc += s * cq_norm(pu(3u) + r * groups + gi);
    }
    act[pu(9u) + t * pu(10u) + r] = (acc.x + acc.z) + (acc.y + acc.w);
}

// Rows of a CQ matrix decoded to floats (`(cb[code] · norm) · H` per group): the embedding and
// the Engram memory rows. Token t, table s reads row `s · per_table + slot`, `slot` from the
// chunk header (param 7 + t · tables + s), NONE giving zeros.
// params: 0 code base bit, 1 row bits, 2 bits, 3 norm base, 4 groups a row, 5 group, 6 cols,
// 7 slot index in ids, 8 tables, 9 rows a table, 10 dst, 11 dst stride, 12 code table, 13 scale
// (f32), 14 times (f32, multiplies the row)
@compute @workgroup_size(64)
fn gather_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = flat(gid, nwg);
    let groups = pu(4u); let g = pu(5u); let cols = pu(6u); let tables = pu(8u);
    if idx >= ntok() * tables * groups { return; }
    let gi = idx % groups;
    let ts = idx / groups;
    let t = ts / tables; let s = ts % tables;
    let slot = ids[pu(7u) + t * tables + s];
    let dst = pu(10u) + t * pu(11u) + s * cols + gi * g;
    let n = min(g, cols - gi * g);
    if slot == NONE {
        for (var i = 0u; i < n; i++) { act[dst + i] = 0.0; }
        return;
    }
    let r = s * pu(9u) + slot;
    let norm = cq_norm(pu(3u) + r * groups + gi);
    // Decode into a private group, transform, keep the first n.
    var buf: array<f32, 1024>;
    for (var i = 0u; i < g; i++) {
        buf[i] = wf[pu(12u) + cq_code(pu(0u), pu(1u), pu(2u), r, gi * g + i)] * norm;
    }
    var h = 1u;
    loop {
        if h >= g { break; }
        for (var blk = 0u; blk < g; blk += 2u * h) {
            for (var i = blk; i < blk + h; i++) {
                let p = buf[i]; let q = buf[i + h];
                buf[i] = p + q; buf[i + h] = p - q;
            }
        }
        h *= 2u;
    }
    let scale = pf(13u); let times = pf(14u);
    for (var i = 0u; i < n; i++) { act[dst + i] = (buf[i] * scale) * times; }
}
