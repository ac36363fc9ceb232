// The examples of README.md and pkg/README.md that show an output, run against the shipped default
// model: what they show is what the package answers. An output is shown one way only:
//
//   ```js block:  console.log(EXPR); // -> VALUE      (a JS literal; the block runs as a module)
//   ```sh block:  needle ARGS                         (the next line; the embedded default model)
//                 # -> STDOUT
//
// A js block that uses `needle` without loading a model runs after
// `const needle = await Needle.load()` (the default model).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { CLI, ROOT } from './helpers.mjs';

const DOCS = ['README.md', 'pkg/README.md'];
const SHOWN = /^(\s*)console\.log\((.*)\);\s*\/\/ -> (.*)$/;
const DIR = join(ROOT, 'target/docs-examples');

/** The fenced blocks of a markdown file: { lang, code, line } (line: the fence's, 1-based). */
function blocks(file) {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\w+)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    while (++i < lines.length && !/^\s*```\s*$/.test(lines[i]));
    found.push({ lang: open[1], code: lines.slice(start + 1, i).join('\n'), line: start + 1 });
  }
  return found;
}

/** A JS literal as written in the docs (single quotes, unquoted keys), as a value. */
const literal = (text) => new Function(`return (${text});`)();

/** The block as a module printing each shown expression as a JSON line, and the values shown. */
function runnable(code) {
  const expected = [];
  const body = code.split('\n').map((line) => {
    const m = SHOWN.exec(line);
    if (!m) return line;
    expected.push(literal(m[3]));
    return `${m[1]}console.log(JSON.stringify(${m[2]}));`;
  });
  const imports = body.filter((l) => /^import\s/.test(l));
  const rest = body.filter((l) => !/^import\s/.test(l));
  const prelude = /\bneedle\s*=/.test(code)
    ? []
    : ["import { Needle } from 'needle-web';", 'const needle = await Needle.load();'];
  return { source: [...imports, ...prelude, ...rest, ''].join('\n'), expected };
}

/** `needle ARGS` split as a shell would split these: words and "double-quoted" strings. */
const words = (command) =>
  [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1] : m[2]));

const examples = DOCS.flatMap((file) => blocks(file).map((b) => ({ ...b, file })));

test('the package ships the default model the docs run on (www/models/default.cact)', () => {
  const shipped = readFileSync(join(ROOT, 'pkg/models/default.cact'));
  assert.ok(shipped.equals(readFileSync(join(ROOT, 'www/models/default.cact'))));
});

test('an output is shown only as `console.log(EXPR); // -> VALUE` (js) or `# -> STDOUT` after a needle command (sh)', () => {
  const shown = examples.filter((b) => /(\/\/|#) ->/.test(b.code));
  // The five of this writing: a parse that finds none would leave every other test vacuous.
  assert.ok(shown.length >= 5, `${shown.length} examples show an output`);
  for (const b of shown) {
    const lines = b.code.split('\n');
    lines.forEach((line, i) => {
      if (b.lang === 'js' && line.includes('// ->')) assert.match(line, SHOWN, `${b.file}:${b.line + 1 + i}`);
      if (b.lang === 'sh' && line.includes('# ->')) {
        assert.match(line, /^# -> /, `${b.file}:${b.line + 1 + i}`);
        assert.match(lines[i - 1] ?? '', /^needle /, `${b.file}:${b.line + 1 + i}: the command is the line before`);
      }
    });
  }
});

for (const b of examples.filter((b) => b.lang === 'js' && b.code.split('\n').some((l) => SHOWN.test(l)))) {
  test(`${b.file}:${b.line}: the js example prints what it shows`, () => {
    const { source, expected } = runnable(b.code);
    mkdirSync(join(DIR, 'node_modules'), { recursive: true });
    rmSync(join(DIR, 'node_modules/needle-web'), { force: true });
    symlinkSync(join(ROOT, 'pkg'), join(DIR, 'node_modules/needle-web'), 'dir');
    const file = join(DIR, `${b.file.replace(/\W/g, '_')}_${b.line}.mjs`);
    writeFileSync(file, source);
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8', timeout: 300_000 });
    const printed = out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.deepEqual(printed, expected, `${b.file}:${b.line} (${file})`);
  });
}

for (const b of examples.filter((b) => b.lang === 'sh')) {
  const lines = b.code.split('\n');
  lines.forEach((line, i) => {
    const shown = /^# -> (.*)$/.exec(line);
    if (!shown) return;
    test(`${b.file}:${b.line + i}: \`${lines[i - 1]}\` prints what it shows`, () => {
      const [, ...args] = words(lines[i - 1]);
      const out = execFileSync(CLI, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      assert.equal(out.trim(), shown[1]);
    });
  });
}
