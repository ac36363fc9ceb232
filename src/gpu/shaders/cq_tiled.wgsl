// The CQ projection shaped for a GPU (the `tiled` kernels; `matmul` in cq.wgsl is `plain`). Same
// parameter slot as `matmul`; appended to cq.wgsl, whose code and norm readers it shares.
//
// Both read a row's codes eight at a time (eight codes of at most 4 bits share one group, as
// groups are powers of two from 16, and lie in at most two words), so neighbouring lanes read
// neighbouring words, and both keep the 16-entry code table in workgroup memory. The products
// are `(table[code] · norm) · x` summed along the row: another order than the CPU's, within the
// f32 parity bars.

// Rows a `matvec_tiled` workgroup computes, and the lanes that share each row.
const MV_ROWS: u32 = 4u;
const MV_LANES: u32 = 16u;
// A `matmul_tiled` tile: rows x tokens, and the slice of the row decoded at a time.
const MM_ROWS: u32 = 16u;
const MM_TOKENS: u32 = 64u;
const MM_SLICE: u32 = 32u;

var<workgroup> cq_tab: array<f32, 16>;
var<workgroup> row_sums: array<f32, 64>;
// One slice of the tile: the rows' decoded weights ([k][row]) and the tokens' inputs ([k][token]).
var<workgroup> w_tile: array<f32, 512>;
var<workgroup> x_tile: array<f32, 2048>;

// Codes k .. k + 8 of row r (k a multiple of 8) as one window of up to 32 bits, code i at bit
// i · bits.
fn cq_codes8(base_bit: u32, row_bits: u32, bits: u32, r: u32, k: u32) -> u32 {
    let p = base_bit + r * row_bits + k * bits;
    let w = p >> 5u;
    let s = p & 31u;
    var v = codes[w] >> s;
    if s > 0u && s + 8u * bits > 32u { v |= codes[w + 1u] << (32u - s); }
    return v;
}

// The matrix's code table into workgroup memory (every lane calls it, in uniform control flow).
fn load_table(lane: u32) {
    if lane < (1u << pu(2u)) { cq_tab[lane] = wf[pu(7u) + lane]; }
    workgroupBarrier();
}

// Decode (and any chunk of few tokens): a workgroup per block of MV_ROWS rows, MV_LANES lanes a
// row striding over it eight codes at a time, each lane's sums reduced across its row's lanes in
// workgroup memory. The tokens run one after another, re-reading the block's codes (a cache
// holds them); chunks of more tokens take `matmul_tiled`.
@compute @workgroup_size(64)
fn matvec_tiled(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    load_table(lane);
    let rows = pu(6u); let bits = pu(2u); let mask = (1u << bits) - 1u;
    let groups = pu(4u); let g = pu(5u); let cp = groups * g;
    let r = (wg.x + wg.y * nwg.x) * MV_ROWS + lane / MV_LANES;
    let sub = lane % MV_LANES;
    let live = r < rows;
    for (var t = 0u; t < ntok(); t++) {
        var acc = 0.0;
        if live {
            let xr = pu(8u) + t * cp;
            for (var k = sub * 8u; k < cp; k += MV_LANES * 8u) {
                let v = cq_codes8(pu(0u), pu(1u), bits, r, k);
                var s = 0.0;
                for (var i = 0u; i < 8u; i++) {
                    s += cq_tab[(v >> (i * bits)) & mask] * act[xr + k + i];
                }
                acc += s * cq_norm(pu(3u) + r * groups + k / g);
            }
        }
        row_sums[lane] = acc;
        workgroupBarrier();
        for (var s = MV_LANES / 2u; s > 0u; s >>= 1u) {
            if sub < s { row_sums[lane] += row_sums[lane + s]; }
            workgroupBarrier();
        }
        if live && sub == 0u { act[pu(9u) + t * pu(10u) + r] = row_sums[lane]; }
        workgroupBarrier();
    }
}

// Prefill: a workgroup per tile of MM_ROWS rows x MM_TOKENS tokens (grid x: row blocks, y: token
// blocks). Slice by slice along the row, the tile's codes are decoded once into workgroup memory
// (each lane eight codes) and the tokens' inputs staged beside them; each lane then accumulates a
// 4 x 4 block of (row, token) outputs from workgroup memory. So a chunk of up to MM_TOKENS tokens
// reads each weight once.
@compute @workgroup_size(64)
fn matmul_tiled(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    load_table(lane);
    let rows = pu(6u); let bits = pu(2u); let mask = (1u << bits) - 1u;
    let groups = pu(4u); let g = pu(5u); let cp = groups * g;
    let nt = ntok(); let xr = pu(8u);
    let r0 = wg.x * MM_ROWS; let t0 = wg.y * MM_TOKENS;
    // This lane's outputs: rows r0 + rq .. + 4, tokens t0 + tq .. + 4.
    let rq = (lane % 4u) * 4u; let tq = (lane / 4u) * 4u;
    // Which eight codes this lane decodes: row r0 + lr, slice elements lk .. lk + 8.
    let lr = lane / 4u; let lk = (lane % 4u) * 8u;
    var acc: array<vec4<f32>, 4>;
    for (var k0 = 0u; k0 < cp; k0 += MM_SLICE) {
        let r = r0 + lr; let k = k0 + lk;
        var v = 0u; var norm = 0.0;
        if r < rows && k < cp {
            v = cq_codes8(pu(0u), pu(1u), bits, r, k);
            norm = cq_norm(pu(3u) + r * groups + k / g);
        }
        for (var i = 0u; i < 8u; i++) {
            w_tile[(lk + i) * MM_ROWS + lr] = cq_tab[(v >> (i * bits)) & mask] * norm;
        }
        for (var j = 0u; j < MM_TOKENS * MM_SLICE / 64u; j++) {
            let at = lane + j * 64u;
            let tt = at / MM_SLICE; let kk = at % MM_SLICE;
            var x = 0.0;
            if t0 + tt < nt && k0 + kk < cp { x = act[xr + (t0 + tt) * cp + k0 + kk]; }
            x_tile[kk * MM_TOKENS + tt] = x;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < MM_SLICE; kk++) {
            let xb = kk * MM_TOKENS + tq;
            let xv = vec4<f32>(x_tile[xb], x_tile[xb + 1u], x_tile[xb + 2u], x_tile[xb + 3u]);
            let wb = kk * MM_ROWS + rq;
            acc[0] += w_tile[wb] * xv;
            acc[1] += w_tile[wb + 1u] * xv;
            acc[2] += w_tile[wb + 2u] * xv;
            acc[3] += w_tile[wb + 3u] * xv;
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let r = r0 + rq + i;
        for (var j = 0u; j < 4u; j++) {
            let t = t0 + tq + j;
            if r < rows && t < nt { act[pu(9u) + t * pu(10u) + r] = acc[i][j]; }
        }
    }
}
