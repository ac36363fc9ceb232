//! A test-side `.cact` writer, written from upstream's exporters (not from the reader): it lays
//! out the canon of each generation with zero-valued weights, so tests can make containers of
//! any geometry (the published needle3.cact's record layout, every CQ width, both head
//! layouts) and corrupt them precisely.

pub const V3_TAG: u32 = 0x05E1_2A84;
pub const V2_TAG: u32 = 0x05E1_2A83;
const FP16: u8 = 1;
const FP32: u8 = 2;
const CQ: u8 = 3;
const RAW: u8 = 4;

pub struct Spec {
    pub name: String,
    pub dtype: u8,
    pub shape: Vec<u32>,
    pub group: u32,
    pub bits: u32,
    pub blob: Vec<u8>,
}

fn fp16(name: impl Into<String>, shape: &[u32]) -> Spec {
    let n: u32 = shape.iter().product();
    Spec {
        name: name.into(),
        dtype: FP16,
        shape: shape.to_vec(),
        group: 0,
        bits: 0,
        blob: vec![0; 2 * n as usize],
    }
}

fn fp16_values(name: impl Into<String>, values: &[u16]) -> Spec {
    let blob = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Spec {
        name: name.into(),
        dtype: FP16,
        shape: vec![values.len() as u32],
        group: 0,
        bits: 0,
        blob,
    }
}

/// Bytes of a CQ blob: packed codes of the group-padded row, then an FP16 norm per group.
pub fn cq_bytes(rows: u32, cols: u32, group: u32, bits: u32) -> usize {
    let code_bits = if bits == 5 { 2 } else { bits } as usize;
    let padded = cols.div_ceil(group) as usize * group as usize;
    rows as usize * (padded * code_bits / 8) + rows as usize * (padded / group as usize) * 2
}

fn cq(name: impl Into<String>, rows: u32, cols: u32, group: u32, bits: u32) -> Spec {
    let blob = vec![0; cq_bytes(rows, cols, group, bits)];
    Spec { name: name.into(), dtype: CQ, shape: vec![rows, cols], group, bits, blob }
}

/// An identity permutation stored as FP32, like upstream's `hada_p1` / `hada_p2`.
fn perm(name: &str, n: u32) -> Spec {
    let blob = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    Spec { name: name.into(), dtype: FP32, shape: vec![n], group: 0, bits: 0, blob }
}

/// A minimal tokenizer attachment: `<pad> </s> <s> <unk>` then single letters.
pub fn tokenizer_blob(pieces: u32) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [pieces, 0, 1, 2, 3] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&[1, 1, 0, 0]);
    for i in 0..pieces {
        let surface = match i {
            0 => "<pad>".to_string(),
            1 => "</s>".to_string(),
            2 => "<s>".to_string(),
            3 => "<unk>".to_string(),
            _ => char::from(b'a' + (i % 26) as u8).to_string().repeat(1 + i as usize / 26),
        };
        b.extend_from_slice(&0f32.to_le_bytes());
        b.push(if i < 3 {
            2
        } else if i == 3 {
            1
        } else {
            0
        });
        b.extend_from_slice(&(surface.len() as u16).to_le_bytes());
        b.extend_from_slice(surface.as_bytes());
    }
    b
}

/// A tokenizer attachment of `(surface, type, score)` records (types: 0 normal, 1 unknown,
/// 2 control, 3 user-defined, 4 byte); pad, eos, bos and unk are ids 0 to 3, no dummy prefix,
/// byte fallback on.
pub fn tokenizer_blob_of(pieces: &[(&str, u8, f32)]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [pieces.len() as u32, 0, 1, 2, 3] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&[0, 1, 0, 0]);
    for &(surface, kind, score) in pieces {
        b.extend_from_slice(&score.to_le_bytes());
        b.push(kind);
        b.extend_from_slice(&(surface.len() as u16).to_le_bytes());
        b.extend_from_slice(surface.as_bytes());
    }
    b
}

fn raw(name: &str, blob: Vec<u8>) -> Spec {
    Spec { name: name.into(), dtype: RAW, shape: vec![], group: 0, bits: 0, blob }
}

/// One probe head: code (1 embedding, 2 confidence, 3 router), probes k, queries q, out width.
#[derive(Clone, Copy)]
pub struct Head {
    pub code: u16,
    pub k: u32,
    pub q: u32,
    pub out: u32,
}

/// A Needle 3 geometry, with the exporter's choices (widths, head layout) made explicit.
#[derive(Clone)]
pub struct V3 {
    pub vocab: u32,
    pub out_vocab: u32,
    pub d_model: u32,
    pub num_heads: u32,
    pub num_kv_heads: u32,
    pub num_layers: u32,
    pub qk_head_dim: u32,
    pub v_head_dim: u32,
    pub mhc_lanes: u32,
    pub sliding_window: u32,
    pub global_layers: u64,
    pub qkv_conv_taps: u32,
    pub engram_slots: u32,
    pub engram_heads: u32,
    pub orders: Vec<u32>,
    pub sites: Vec<u32>,
    pub group: u32,
    /// CQ width per matrix, cycled over the matrices in canon order (heads always use 4).
    pub widths: Vec<u32>,
    pub heads: Vec<Head>,
    /// Upstream's older head layout: all FP16, probes `(L+1, k, d_model)`.
    pub fp16_heads: bool,
}

impl V3 {
    /// A small geometry that exercises every optional part.
    pub fn tiny() -> Self {
        V3 {
            vocab: 40,
            out_vocab: 0,
            d_model: 48,
            num_heads: 4,
            num_kv_heads: 2,
            num_layers: 3,
            qk_head_dim: 8,
            v_head_dim: 12,
            mhc_lanes: 2,
            sliding_window: 8,
            global_layers: 0b100,
            qkv_conv_taps: 3,
            engram_slots: 8,
            engram_heads: 1,
            orders: vec![2, 3],
            sites: vec![0, 2],
            group: 16,
            widths: vec![4],
            heads: vec![Head { code: 2, k: 3, q: 2, out: 1 }],
            fp16_heads: false,
        }
    }

    pub fn hada_n(&self) -> u32 {
        self.d_model.next_power_of_two()
    }

    fn tables(&self) -> u32 {
        self.orders.len() as u32 * self.engram_heads
    }

    fn sub_dim(&self) -> u32 {
        self.d_model / self.tables()
    }

    pub fn specs(&self) -> Vec<Spec> {
        let mut widths = self.widths.iter().copied().cycle();
        let g = self.group;
        let mut q =
            |name: String, rows: u32, cols: u32| cq(name, rows, cols, g, widths.next().unwrap());
        let (d, n) = (self.d_model, self.hada_n());
        let (qo, ko, vo, ao) = (
            self.num_heads * self.qk_head_dim,
            self.num_kv_heads * self.qk_head_dim,
            self.num_kv_heads * self.v_head_dim,
            self.num_heads * self.v_head_dim,
        );
        let a = 1u32 << ((32 - (n - 1).leading_zeros()) / 2);
        let b = n / a;
        let mut ts = vec![q("embedding".into(), self.vocab, d)];
        for i in 0..self.num_layers {
            let p = |s: &str| format!("layer{i:02}.{s}");
            ts.push(fp16(p("norm_in"), &[d]));
            ts.push(q(p("q_proj"), qo, d));
            ts.push(q(p("k_proj"), ko, d));
            ts.push(q(p("v_proj"), vo, d));
            if self.qkv_conv_taps > 0 {
                ts.push(fp16(p("q_taps"), &[self.qkv_conv_taps, qo]));
                ts.push(fp16(p("k_taps"), &[self.qkv_conv_taps, ko]));
                ts.push(fp16(p("v_taps"), &[self.qkv_conv_taps, vo]));
            }
            ts.push(fp16(p("q_norm"), &[self.qk_head_dim]));
            ts.push(fp16(p("k_norm"), &[self.qk_head_dim]));
            ts.push(q(p("gate_proj"), ao, d));
            ts.push(q(p("out_proj"), d, ao));
            ts.push(fp16(p("post_norm"), &[d]));
            ts.push(fp16(p("attn_gate"), &[1]));
            ts.push(fp16(p("pre_hada"), &[d]));
            for s in ["d1", "d2", "b2", "d3", "d4"] {
                ts.push(fp16(p(s), &[n]));
            }
            for s in 1..=3 {
                ts.push(fp16(p(&format!("w{s}a")), &[a, a]));
                ts.push(fp16(p(&format!("w{s}b")), &[b, b]));
            }
            ts.push(fp16(p("cond_v"), &[d, 8]));
            ts.push(fp16(p("cond_u"), &[8, n]));
        }
        ts.extend(mhc(self.num_layers, self.mhc_lanes, d, &mut q));
        ts.push(perm("hada_p1", n));
        ts.push(perm("hada_p2", n));
        for s in 0..self.sites.len() {
            ts.extend(engram_site(s, self.tables(), self.engram_slots, self.sub_dim(), d, &mut q));
        }
        ts.push(fp16("final_norm", &[d]));
        if !self.heads.is_empty() {
            let codes: Vec<u16> =
                self.heads.iter().map(|h| [0x3c00, 0x4000, 0x4200][h.code as usize - 1]).collect();
            ts.push(fp16_values("heads.manifest", &codes));
        }
        let rows = self.num_layers + 1;
        for h in &self.heads {
            let key = ["embedding_head", "confidence_head", "router_head"][h.code as usize - 1];
            let p = |s: &str| format!("{key}.{s}");
            if self.fp16_heads {
                ts.push(fp16(p("probes"), &[rows, h.k, d]));
                ts.push(fp16(p("gain"), &[rows, h.k]));
                ts.push(fp16(p("query"), &[h.q, d]));
                ts.push(fp16(p("row_bias"), &[h.q, rows, h.k]));
                ts.push(fp16(p("proj"), &[h.out, h.q * d]));
            } else {
                ts.push(cq(p("probes"), rows * h.k, d, g, 4));
                ts.push(fp16(p("gain"), &[rows, h.k]));
                ts.push(cq(p("query"), h.q, d, g, 4));
                ts.push(fp16(p("row_bias"), &[h.q, rows, h.k]));
                ts.push(cq(p("proj"), h.out, h.q * d, g, 4));
            }
            ts.push(fp16(p("bias"), &[h.out]));
            if h.code == 3 {
                ts.push(fp16(p("calibration"), &[3]));
            }
        }
        ts.push(raw("tokenizer", tokenizer_blob(self.vocab.min(30))));
        ts
    }

    pub fn header(&self, num_tensors: u32) -> Vec<u8> {
        let f = vec![
            V3_TAG,
            num_tensors,
            28,
            0,
            8,
            self.vocab,
            self.out_vocab,
            self.d_model,
            self.num_heads,
            self.num_kv_heads,
            self.num_layers,
            self.qk_head_dim,
            self.v_head_dim,
            256,
            self.hada_n(),
            self.mhc_lanes,
            self.sliding_window,
            self.global_layers as u32,
            (self.global_layers >> 32) as u32,
            self.qkv_conv_taps,
            self.engram_slots,
            self.sub_dim(),
            self.tables(),
            4,
            *self.orders.iter().max().unwrap(),
            0,
            self.orders.len() as u32,
        ];
        header_tail(f, &self.orders, &self.sites, 16, 48)
    }

    pub fn build(&self) -> Built {
        let specs = self.specs();
        assemble(self.header(specs.len() as u32), specs)
    }

    /// [`Self::build`] with `blob` as the tokenizer attachment.
    pub fn build_with_tokenizer(&self, blob: Vec<u8>) -> Built {
        let mut specs = self.specs();
        specs.iter_mut().find(|s| s.name == "tokenizer").expect("a tokenizer spec").blob = blob;
        assemble(self.header(specs.len() as u32), specs)
    }
}

/// A Needle 2 geometry.
#[derive(Clone)]
pub struct V2 {
    pub vocab: u32,
    pub d_model: u32,
    pub num_heads: u32,
    pub num_kv_heads: u32,
    pub num_layers: u32,
    pub head_dim: u32,
    pub mhc_lanes: u32,
    pub engram_slots: u32,
    pub engram_heads: u32,
    pub orders: Vec<u32>,
    pub sites: Vec<u32>,
    pub group: u32,
    pub widths: Vec<u32>,
    /// (code, probes, out): 1 contrastive, 2 confidence.
    pub heads: Vec<(u16, u32, u32)>,
}

impl V2 {
    pub fn tiny() -> Self {
        V2 {
            vocab: 30,
            d_model: 32,
            num_heads: 4,
            num_kv_heads: 2,
            num_layers: 2,
            head_dim: 8,
            mhc_lanes: 2,
            engram_slots: 8,
            engram_heads: 1,
            orders: vec![2, 3],
            sites: vec![1],
            group: 16,
            widths: vec![4, 2, 3, 5],
            heads: vec![(1, 4, 16), (2, 8, 1)],
        }
    }

    fn tables(&self) -> u32 {
        self.orders.len() as u32 * self.engram_heads
    }

    pub fn specs(&self) -> Vec<Spec> {
        let mut widths = self.widths.iter().copied().cycle();
        let g = self.group;
        let mut q =
            |name: String, rows: u32, cols: u32| cq(name, rows, cols, g, widths.next().unwrap());
        let (d, n) = (self.d_model, self.d_model.next_power_of_two());
        let (qo, kvo) = (self.num_heads * self.head_dim, self.num_kv_heads * self.head_dim);
        let mut ts = vec![q("embedding".into(), self.vocab, d)];
        for i in 0..self.num_layers {
            let p = |s: &str| format!("layer{i:02}.{s}");
            ts.push(fp16(p("norm_in"), &[d]));
            ts.push(q(p("q_proj"), qo, d));
            ts.push(q(p("k_proj"), kvo, d));
            ts.push(q(p("v_proj"), kvo, d));
            ts.push(fp16(p("q_norm"), &[self.head_dim]));
            ts.push(fp16(p("k_norm"), &[self.head_dim]));
            ts.push(q(p("gate_proj"), qo, d));
            ts.push(q(p("out_proj"), d, qo));
            ts.push(fp16(p("post_norm"), &[d]));
            ts.push(fp16(p("attn_gate"), &[1]));
            ts.push(fp16(p("pre_hada"), &[d]));
            for s in ["d1", "d2", "d3"] {
                ts.push(fp16(p(s), &[n]));
            }
        }
        ts.extend(mhc(self.num_layers, self.mhc_lanes, d, &mut q));
        for s in 0..self.sites.len() {
            ts.extend(engram_site(
                s,
                self.tables(),
                self.engram_slots,
                d / self.tables(),
                d,
                &mut q,
            ));
        }
        ts.push(fp16("final_norm", &[d]));
        if !self.heads.is_empty() {
            let codes: Vec<u16> =
                self.heads.iter().map(|h| [0x3c00, 0x4000][h.0 as usize - 1]).collect();
            ts.push(fp16_values("heads.manifest", &codes));
        }
        for &(code, probes, out) in &self.heads {
            let key = ["contrastive_head", "confidence_head"][code as usize - 1];
            ts.push(fp16(format!("{key}.probes"), &[probes, d]));
            ts.push(fp16(format!("{key}.proj"), &[out, probes * d]));
            ts.push(fp16(format!("{key}.bias"), &[out]));
        }
        ts.push(raw("tokenizer", tokenizer_blob(self.vocab)));
        ts
    }

    pub fn header(&self, num_tensors: u32) -> Vec<u8> {
        let tables = self.tables();
        let f = vec![
            V2_TAG,
            num_tensors,
            28,
            0,
            8,
            self.vocab,
            self.d_model,
            self.num_heads,
            self.num_kv_heads,
            self.num_layers,
            self.head_dim,
            128,
            self.d_model.next_power_of_two(),
            self.mhc_lanes,
            self.engram_slots,
            self.d_model / tables,
            tables,
            4,
            *self.orders.iter().max().unwrap(),
            self.orders.len() as u32,
        ];
        header_tail(f, &self.orders, &self.sites, 4, 29)
    }

    pub fn build(&self) -> Built {
        let specs = self.specs();
        assemble(self.header(specs.len() as u32), specs)
    }
}

/// Finishes a header from its leading u32 fields `f`: the Engram orders (zero-padded to 4),
/// the site count and sites (zero-padded to `site_slots`), checked to make `fields` u32 in
/// all, then rope_theta.
fn header_tail(
    mut f: Vec<u32>,
    orders: &[u32],
    sites: &[u32],
    site_slots: usize,
    fields: usize,
) -> Vec<u8> {
    f.extend(orders.iter().copied().chain(std::iter::repeat(0)).take(4));
    f.push(sites.len() as u32);
    f.extend(sites.iter().copied().chain(std::iter::repeat(0)).take(site_slots));
    assert_eq!(f.len(), fields);
    let mut out: Vec<u8> = f.iter().flat_map(|v| v.to_le_bytes()).collect();
    out.extend_from_slice(&100000f32.to_le_bytes());
    out
}

fn mhc(layers: u32, lanes: u32, d: u32, q: &mut impl FnMut(String, u32, u32) -> Spec) -> Vec<Spec> {
    vec![
        fp16("mhc_a_pre", &[layers]),
        fp16("mhc_a_post", &[layers]),
        fp16("mhc_a_res", &[layers]),
        fp16("mhc_b_pre", &[layers, lanes]),
        fp16("mhc_b_post", &[layers, lanes]),
        fp16("mhc_b_res", &[layers, lanes, lanes]),
        q("mhc_phi_pre".into(), layers * lanes, lanes * d),
        q("mhc_phi_post".into(), layers * lanes, lanes * d),
        q("mhc_phi_res".into(), layers * lanes * lanes, lanes * d),
    ]
}

fn engram_site(
    s: usize,
    tables: u32,
    slots: u32,
    sub_dim: u32,
    d: u32,
    q: &mut impl FnMut(String, u32, u32) -> Spec,
) -> Vec<Spec> {
    vec![
        q(format!("engram{s}.tables"), tables * slots, sub_dim),
        q(format!("engram{s}.key_proj"), d, tables * sub_dim),
        q(format!("engram{s}.value_proj"), d, tables * sub_dim),
        fp16(format!("engram{s}.taps"), &[4, d]),
    ]
}

/// A written container and where its parts are.
pub struct Built {
    pub bytes: Vec<u8>,
    pub names: Vec<String>,
    /// Byte position of each directory record.
    pub records: Vec<usize>,
    /// (offset, nbytes) of each tensor.
    pub blobs: Vec<(usize, usize)>,
}

pub const RECORD: usize = 44;

/// Header, 28 codebook levels, directory, then the blobs at 64-byte alignment.
pub fn assemble(header: Vec<u8>, specs: Vec<Spec>) -> Built {
    let mut bytes = header;
    for i in 0..28 {
        bytes.extend_from_slice(&(i as f32 * 0.01 - 0.1).to_le_bytes());
    }
    let dir_start = bytes.len();
    let mut pos = dir_start + specs.len() * RECORD;
    let mut blobs = Vec::new();
    for s in &specs {
        pos = pos.div_ceil(64) * 64;
        blobs.push((pos, s.blob.len()));
        pos += s.blob.len();
    }
    let mut records = Vec::new();
    for (s, &(offset, nbytes)) in specs.iter().zip(&blobs) {
        records.push(bytes.len());
        bytes.push(s.dtype);
        bytes.push(s.shape.len() as u8);
        bytes.extend_from_slice(&[0, 0]);
        for i in 0..4 {
            bytes.extend_from_slice(&s.shape.get(i).copied().unwrap_or(0).to_le_bytes());
        }
        bytes.extend_from_slice(&(offset as u64).to_le_bytes());
        bytes.extend_from_slice(&(nbytes as u64).to_le_bytes());
        bytes.extend_from_slice(&s.group.to_le_bytes());
        bytes.extend_from_slice(&s.bits.to_le_bytes());
    }
    for (s, &(offset, _)) in specs.iter().zip(&blobs) {
        bytes.resize(offset, 0);
        bytes.extend_from_slice(&s.blob);
    }
    Built { bytes, names: specs.into_iter().map(|s| s.name).collect(), records, blobs }
}
