// WebKitGTK (Safari's engine) through Debian's WebKitWebDriver, classic WebDriver over HTTP: the
// driver starts MiniBrowser, which has no headless mode here, so both run under `xvfb-run`.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

const MINIBROWSER = '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const SCRIPT_TIMEOUT_MS = 600_000;

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

async function call(method, url, body) {
  const r = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await r.json();
  if (!r.ok) throw new Error(`WebDriver ${method} ${url}: ${json.value?.error}: ${json.value?.message}`);
  return json.value;
}

export async function launchBrowser() {
  const port = await freePort();
  // Its own process group, so close() ends xvfb-run, Xvfb, the driver and the browser together.
  const driver = spawn('xvfb-run', ['-a', '/usr/bin/WebKitWebDriver', `--port=${port}`], { detached: true, stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await call('GET', `${base}/status`)).ready) break;
    } catch (e) {
      if (i > 200) throw new Error(`WebKitWebDriver did not start: ${e.message}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const { sessionId } = await call('POST', `${base}/session`, {
    capabilities: { alwaysMatch: { 'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] } } },
  });
  const session = `${base}/session/${sessionId}`;
  await call('POST', `${session}/timeouts`, { script: SCRIPT_TIMEOUT_MS, pageLoad: 120_000 });
  const evaluate = async (f, arg) => {
    const script = `const done = arguments[1];
      Promise.resolve().then(() => (${f})(arguments[0])).then(
        (value) => done({ value: value === undefined ? null : value }),
        (e) => done({ error: String((e && e.stack) || e) }));`;
    const out = await call('POST', `${session}/execute/async`, { script, args: [arg ?? null] });
    if (out.error) throw new Error(`in WebKit: ${out.error}`);
    return out.value;
  };
  return {
    name: 'webkit',
    async open(url) {
      await call('POST', `${session}/url`, { url });
      return { evaluate };
    },
    async close() {
      await call('DELETE', session).catch(() => {});
      try {
        process.kill(-driver.pid, 'SIGTERM');
      } catch {}
    },
  };
}
