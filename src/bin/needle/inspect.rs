//! `needle inspect [--model F] [--json]`: what a container holds, as the reader sees it —
//! generation, header geometry, codebooks, tokenizer framing, probe heads and the named
//! tensor table.
use std::fmt::Write as _;

use needle_web::container::{self, Container, Field, NamedTensor};
use needle_web::tokenizer::Tokenizer;
use needle_web::{v2, v3};

use crate::model;
use crate::{Args, Failure};

pub const USAGE: &str =
    "inspect [--model F] [--json]   print a container's geometry and tensor table";

pub fn run(mut args: Args) -> Result<(), Failure> {
    let model = model::read(&mut args)?;
    let json = args.flag("--json");
    args.finish()?;
    let c = container::parse(&model.bytes)?;
    check_runnable(&c)?;
    let out = if json {
        render_json(&c, model.bytes.len())
    } else {
        render_text(&c, &model.source, model.bytes.len())
    };
    print!("{out}");
    Ok(())
}

/// Refuses what `run` would refuse when loading: the tokenizer and the model built from the
/// container (geometry the forward pass cannot run), so a file `inspect` accepts loads.
fn check_runnable(c: &Container<'_>) -> Result<(), Failure> {
    Tokenizer::from_blob(c.tokenizer())?;
    match c {
        Container::V3(c) => drop(v3::Model::new(c)?),
        Container::V2(c) => drop(v2::Model::new(c)?),
    }
    Ok(())
}

/// One line per probe head: (key, description).
fn heads(c: &Container<'_>) -> Vec<(&'static str, String)> {
    match c {
        Container::V3(c) => c
            .heads
            .iter()
            .map(|h| {
                let layout = if h.probes.dtype == container::DType::Cq { "CQ" } else { "FP16" };
                (
                    h.kind.key(),
                    format!(
                        "probes {} queries {} out {} ({layout})",
                        h.num_probes, h.num_queries, h.out_dim
                    ),
                )
            })
            .collect(),
        Container::V2(c) => c
            .heads
            .iter()
            .map(|h| (h.kind.key(), format!("probes {} out {}", h.num_probes, h.out_dim)))
            .collect(),
    }
}

fn shape_text(t: &NamedTensor<'_>) -> String {
    let dims = t.view.dims();
    if dims.is_empty() {
        return "-".into();
    }
    dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

fn field_text(f: &Field<'_>) -> String {
    match *f {
        Field::Int(v) => v.to_string(),
        Field::Real(v) => v.to_string(),
        Field::List(l) => format!("{l:?}"),
        Field::LayerMask(m) => format!("{:?}", mask_layers(m)),
    }
}

fn mask_layers(mask: u64) -> Vec<u32> {
    (0..64).filter(|i| mask >> i & 1 == 1).collect()
}

fn render_text(c: &Container<'_>, path: &str, file_len: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{path}: {file_len} bytes");
    let _ = writeln!(s, "generation  Needle {}", c.generation().number());
    let _ = writeln!(s, "geometry");
    for (name, f) in c.header_fields() {
        let _ = writeln!(s, "  {name:<22} {}", field_text(&f));
    }
    let cb = c.codebooks();
    let _ = writeln!(
        s,
        "codebooks   cb2[{}] cb3[{}] cb4[{}]",
        cb.cb2.len(),
        cb.cb3.len(),
        cb.cb4.len()
    );
    let t = c.tokenizer_summary();
    let _ = writeln!(
        s,
        "tokenizer   {} pieces (pad {}, eos {}, bos {}, unk {}), {} bytes",
        t.pieces,
        t.pad,
        t.eos,
        t.bos,
        t.unk,
        c.tokenizer().len()
    );
    let heads = heads(c);
    if heads.is_empty() {
        let _ = writeln!(s, "heads       none");
    }
    for (key, desc) in heads {
        let _ = writeln!(s, "head        {key}: {desc}");
    }
    let _ = writeln!(s, "tensors");
    let _ = writeln!(
        s,
        "  {:>4}  {:<26} {:<5} {:<16} {:>4} {:>5} {:>10} {:>10}",
        "idx", "name", "dtype", "shape", "bits", "group", "offset", "bytes"
    );
    for t in c.tensors() {
        let v = &t.view;
        let _ = writeln!(
            s,
            "  {:>4}  {:<26} {:<5} {:<16} {:>4} {:>5} {:>10} {:>10}",
            v.index,
            t.name.to_string(),
            v.dtype.name(),
            shape_text(t),
            v.bits,
            v.group,
            v.offset,
            v.data.len()
        );
    }
    s
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_list<T: ToString>(items: impl IntoIterator<Item = T>) -> String {
    format!("[{}]", items.into_iter().map(|i| i.to_string()).collect::<Vec<_>>().join(","))
}

fn field_json(f: &Field<'_>) -> String {
    match *f {
        Field::Int(v) => v.to_string(),
        // Header reals are checked finite, so Display is valid JSON.
        Field::Real(v) => v.to_string(),
        Field::List(l) => json_list(l),
        Field::LayerMask(m) => json_list(mask_layers(m)),
    }
}

fn render_json(c: &Container<'_>, file_len: usize) -> String {
    let geometry: Vec<String> = c
        .header_fields()
        .iter()
        .map(|(k, f)| format!("{}:{}", json_str(k), field_json(f)))
        .collect();
    let cb = c.codebooks();
    let t = c.tokenizer_summary();
    let heads: Vec<String> = heads(c)
        .into_iter()
        .map(|(k, d)| format!("{{\"key\":{},\"summary\":{}}}", json_str(k), json_str(&d)))
        .collect();
    let tensors: Vec<String> = c
        .tensors()
        .iter()
        .map(|t| {
            let v = &t.view;
            format!(
                "{{\"index\":{},\"name\":{},\"dtype\":{},\"dtype_code\":{},\"shape\":{},\"bits\":{},\"group\":{},\"offset\":{},\"nbytes\":{}}}",
                v.index,
                json_str(&t.name.to_string()),
                json_str(v.dtype.name()),
                v.dtype.code(),
                json_list(v.dims()),
                v.bits,
                v.group,
                v.offset,
                v.data.len()
            )
        })
        .collect();
    format!(
        "{{\"generation\":{},\"file_bytes\":{},\"geometry\":{{{}}},\"codebooks\":{{\"cb2\":{},\"cb3\":{},\"cb4\":{}}},\
         \"tokenizer\":{{\"pieces\":{},\"pad\":{},\"eos\":{},\"bos\":{},\"unk\":{},\"bytes\":{}}},\"heads\":[{}],\"tensors\":[{}]}}\n",
        c.generation().number(),
        file_len,
        geometry.join(","),
        json_list(cb.cb2),
        json_list(cb.cb3),
        json_list(cb.cb4),
        t.pieces,
        t.pad,
        t.eos,
        t.bos,
        t.unk,
        c.tokenizer().len(),
        heads.join(","),
        tensors.join(",")
    )
}
