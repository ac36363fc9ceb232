// A module worker for threads.test.mjs: runs one wasm build of the package directly (not through
// Needle.load) and answers { logits, tokens, threads }: the logits after every prompt id and a
// greedy completion. The threaded build splits every product (least chunk work 1) across
// `threads` threads, so every split path runs.
import { startThreads } from '/pkg/threads.js';

self.onmessage = async ({ data: { variant, bytes, ids, threads } }) => {
  try {
    const base = `/pkg/wasm/${variant}/`;
    const glue = await import(`${base}needle.js`);
    await glue.default({ module_or_path: `${base}needle_bg.wasm` });
    if (variant === 'threaded') {
      glue.setMinChunkWork(1);
      await startThreads(glue, threads);
    }
    const session = new glue.Session(new Uint8Array(bytes));
    const logits = session.logits(Uint32Array.from(ids));
    session.start(JSON.stringify({ query: 'Turn on the kitchen lights', tools: '[]', maxTokens: 16 }));
    while (session.next() !== undefined);
    const { tokens } = JSON.parse(session.finish());
    self.postMessage({ logits, tokens, threads: variant === 'threaded' ? glue.poolThreads() : 1 });
  } catch (e) {
    self.postMessage({ error: String((e && e.stack) || e) });
  }
};
