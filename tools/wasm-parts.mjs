#!/usr/bin/env node
// Where a wasm module's bytes go: each section's size, and the code section's function bodies
// summed by the Rust module they come from (read from the "name" section, so run it on a build
// that keeps names: cargo's output, or wasm-opt with -g).
//   node tools/wasm-parts.mjs FILE.wasm [--top N]
import { readFileSync } from 'node:fs';

const SECTION = [
  'custom',
  'type',
  'import',
  'function',
  'table',
  'memory',
  'global',
  'export',
  'start',
  'element',
  'code',
  'data',
  'datacount',
  'tag',
];

class Reader {
  constructor(bytes, at = 0, end = bytes.length) {
    Object.assign(this, { bytes, at, end });
  }
  u8() {
    return this.bytes[this.at++];
  }
  uleb() {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.u8();
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) return result;
    }
  }
  name() {
    const n = this.uleb();
    const s = new TextDecoder().decode(this.bytes.subarray(this.at, this.at + n));
    this.at += n;
    return s;
  }
  limits() {
    const flags = this.u8();
    this.uleb();
    if (flags & 1) this.uleb();
  }
}

/** Function imports (they take the first indices), each function body's size, names, sections. */
function parse(bytes) {
  const r = new Reader(bytes, 8);
  const sections = [];
  let imported = 0;
  const bodies = [];
  const names = new Map();
  while (r.at < r.end) {
    const id = r.u8();
    const size = r.uleb();
    const start = r.at;
    const s = new Reader(bytes, start, start + size);
    let label = SECTION[id] ?? `section ${id}`;
    if (id === 0) {
      const custom = s.name();
      label = `custom "${custom}"`;
      if (custom === 'name') readNames(s, names);
    } else if (id === 2) {
      for (let n = s.uleb(); n > 0; n--) {
        s.name();
        s.name();
        const kind = s.u8();
        if (kind === 0) s.uleb(), imported++;
        else if (kind === 1) s.u8(), s.limits();
        else if (kind === 2) s.limits();
        else if (kind === 3) s.u8(), s.u8();
        else if (kind === 4) s.u8(), s.uleb();
      }
    } else if (id === 10) {
      for (let n = s.uleb(); n > 0; n--) {
        const len = s.uleb();
        bodies.push(len);
        s.at += len;
      }
    }
    sections.push({ label, size });
    r.at = start + size;
  }
  return {
    sections,
    functions: bodies.map((size, i) => ({
      size,
      name: names.get(imported + i) ?? `func ${imported + i}`,
    })),
  };
}

function readNames(s, names) {
  while (s.at < s.end) {
    const kind = s.u8();
    const size = s.uleb();
    const end = s.at + size;
    if (kind === 1) {
      for (let n = s.uleb(); n > 0; n--) {
        const index = s.uleb();
        names.set(index, s.name());
      }
    }
    s.at = end;
  }
}

/** Length-prefixed identifiers (`4core3fmt5write`) from `at` on, as far as they go. */
function idents(s, at = 0) {
  const out = [];
  for (let m; (m = /^(\d+)/.exec(s.slice(at))); ) {
    const n = Number(m[1]);
    out.push(s.slice(at + m[1].length, at + m[1].length + n));
    at += m[1].length + n;
  }
  return out;
}

/** A Rust symbol's path (legacy `_ZN` or v0 `_R` mangling, or demangled), as far as it can be read. */
function rustPath(symbol) {
  if (symbol.includes('::')) {
    // Demangled (wasm-opt -g): `crate[hash]::module::f`, `<crate::T as other::Trait>::f`.
    const type = symbol.replace(/^<+/, '').split(' as ')[0];
    const path = type.split('::').map((s) => s.replace(/\[[0-9a-f]+\]$/, ''));
    return /^[a-z_][a-z0-9_]*$/.test(path[0]) ? path : [];
  }
  if (symbol.startsWith('_ZN')) {
    const path = idents(symbol, 3);
    // A trait impl's path starts with `_<Type as Trait>`: name it by the type, or by the trait
    // when the type is a slice or a primitive.
    if (path[0] && path[0].startsWith('_$LT$')) {
      const [type, trait = ''] = path[0].slice(5).split('$u20$as$u20$');
      const named = /^[a-z_]+\.\./.test(type) ? type : trait;
      return named.split(/\$/)[0].split('..');
    }
    return path;
  }
  // v0: the crate root is `C<disambiguator>_` followed by the path's identifiers.
  const root = /C(?:s[0-9A-Za-z]*_)?(?=\d)/.exec(symbol);
  return root ? idents(symbol, root.index + root[0].length) : [];
}

/** Which part of the module a function counts toward: the crate, and our module or std's. */
export function part(symbol) {
  if (symbol.startsWith('__wbg') || symbol.startsWith('__wbindgen')) return 'wasm-bindgen glue';
  if (!symbol.startsWith('_ZN') && !symbol.startsWith('_R') && !symbol.includes('::'))
    return 'other (unmangled)';
  const [crate, module] = rustPath(symbol);
  if (!crate) return 'other';
  if (['core', 'alloc', 'std', 'needle_web'].includes(crate)) return `${crate}::${module ?? ''}`;
  return crate;
}

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`.padStart(11);

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  const top = Number(process.argv[process.argv.indexOf('--top') + 1]) || 40;
  if (!file) {
    console.error('usage: node tools/wasm-parts.mjs FILE.wasm [--top N]');
    process.exit(2);
  }
  const { sections, functions } = parse(readFileSync(file));
  console.log(`${file}: ${kb(sections.reduce((n, s) => n + s.size, 0))} of sections`);
  for (const s of sections) console.log(`  ${s.label.padEnd(32)} ${kb(s.size)}`);
  const parts = new Map();
  for (const f of functions) {
    const p = part(f.name);
    const e = parts.get(p) ?? { size: 0, count: 0 };
    e.size += f.size;
    e.count += 1;
    parts.set(p, e);
  }
  console.log(`code by part (${functions.length} functions):`);
  for (const [p, e] of [...parts].sort((a, b) => b[1].size - a[1].size).slice(0, top)) {
    console.log(`  ${p.padEnd(40)} ${kb(e.size)}  ${String(e.count).padStart(5)} fns`);
  }
}
