// The "returning page" benchmark (issue 41), in headless Chromium through the package (its module
// Worker, Cache Storage): a first visit's first request on the benchmark's long system + tools
// prefix (workload.mjs `long` / `repeat`), its in-session repeat, then after a reload the
// returning page's first request, which loads the prefix snapshot the first visit stored instead
// of prefilling it; and the snapshot's load time against the prefix's cold prefill, its size
// against the KV bytes of those tokens. One run: compare the ratios within it. Prints one JSON
// object.
//
//   node tools/bench/returning-page.mjs --model bench/needle3-shipped-w4.cact [--threads auto|N]
import { benchBrowser } from './browser.mjs';
import { workload } from './workload.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const threadsArg = opt('--threads', 'false');
const threads =
  threadsArg === 'auto' ? 'auto' : threadsArg === 'false' ? false : Number(threadsArg);
const requests = workload();
const long = requests.find((r) => r.name === 'long');
const repeat = requests.find((r) => r.name === 'repeat');
const prefix = { tools: long.tools, system: long.system };

const { server, browser, close } = await benchBrowser(opt('--model'));

/** Runs `step` in a fresh load of the page (the same origin's storage each time). */
async function visit(page, step) {
  await page.goto(`${server.url}bench/page.html`);
  return page.evaluate(
    async ({ step, prefix, long, repeat, threads }) => {
      const { Needle } = await import('/pkg/index.js');
      const load = (o = {}) => Needle.load('/models/default.cact', { threads, ...o });
      // Time to the first token of one request, its `snapshot` field and the tokens it reused.
      const ttft = async (needle, r) => {
        const t0 = performance.now();
        let first = null;
        const out = await needle.complete(r.query, {
          tools: r.tools,
          system: r.system,
          maxTokens: 1,
          onToken: () => (first ??= performance.now() - t0),
        });
        return {
          ttft_ms: first,
          snapshot: out.snapshot,
          cached: out.usage.cached_tokens,
          prompt: out.usage.prompt_tokens,
          tokens: out.tokens,
        };
      };
      const out = {};
      if (step === 'first') {
        // The cold prefill of the prefix alone, and the KV bytes it holds, on an engine that keeps nothing.
        const cold = await load({ snapshots: false });
        out.variant = `${cold.info.variant}${cold.info.threads > 1 ? ` x${cold.info.threads}` : ''}`;
        let t0 = performance.now();
        const p = await cold.prepare(prefix);
        out.cold_prefill_ms = performance.now() - t0;
        out.prefix_tokens = p.tokens;
        out.kv_bytes = (await cold.refreshInfo()).kv_bytes;
        cold.dispose();
        const needle = await load();
        t0 = performance.now();
        out.first = await ttft(needle, long);
        out.repeat = await ttft(needle, repeat);
        needle.dispose();
        const usage = await Needle.cacheUsage();
        out.snapshot_bytes = usage.snapshots.map((s) => s.bytes);
      } else if (step === 'returning') {
        const needle = await load();
        out.returning = await ttft(needle, repeat);
        needle.dispose();
      } else {
        const needle = await load();
        const t0 = performance.now();
        const p = await needle.prepare(prefix);
        out.snapshot_load_ms = performance.now() - t0;
        out.prepared = p.snapshot;
        needle.dispose();
      }
      return out;
    },
    { step, prefix, long, repeat, threads },
  );
}

try {
  const context = await browser.newContext();
  const page = await context.newPage();
  const first = await visit(page, 'first');
  const returning = await visit(page, 'returning');
  const loadOnly = await visit(page, 'load');
  const r = { ...first, ...returning, ...loadOnly };
  r.ratios = {
    returning_vs_repeat_ttft: r.returning.ttft_ms / r.repeat.ttft_ms,
    first_vs_returning_ttft: r.first.ttft_ms / r.returning.ttft_ms,
    snapshot_load_vs_cold_prefill: r.snapshot_load_ms / r.cold_prefill_ms,
    snapshot_vs_kv_bytes: r.snapshot_bytes[0] / r.kv_bytes,
    returning_tokens_equal_repeat:
      JSON.stringify(r.returning.tokens) === JSON.stringify(r.repeat.tokens),
  };
  console.log(JSON.stringify(r, null, 2));
} finally {
  await close();
}
