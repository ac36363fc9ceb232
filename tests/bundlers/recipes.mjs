// How each bundler builds an app that uses needle-web: exactly the recipes pkg/README.md shows
// ("Bundlers"). Vite (build and dev server; Vite 8's dependency pre-bundling rewrites the URLs) and
// webpack 5 follow the package's `new Worker(new URL(..., import.meta.url))` and
// `new URL(..., import.meta.url)` assets with no configuration; esbuild and Rollup do not follow
// `new URL`, so their recipe copies the package's runtime files beside the bundle.
//
// Each recipe: build(appDir, outDir, { model }) -> writes a servable directory; `model` says
// whether the app loads the default model (the runtime copy leaves it out otherwise).
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The app's `node_modules/needle-web`, found as Node resolution finds it. */
const packageDir = (appDir) => dirname(createRequire(join(appDir, 'main.js')).resolve('needle-web/package.json'));

/** The esbuild/Rollup line: the package's runtime beside the bundle (without models/ unless used). */
function copyRuntime(appDir, outDir, model) {
  cpSync(packageDir(appDir), outDir, { recursive: true, filter: (f) => model || !f.endsWith('.cact') });
}

function fresh(outDir) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
}

// Vite 8 and the two majors before it, still most projects' (npm aliases vite7, vite6).
export const VITES = { vite: 'vite', 'vite 7': 'vite7', 'vite 6': 'vite6' };

// The one line Vite 6 and 7's dev server needs (pkg/README.md): their dependency pre-bundling
// moves the package into .vite/deps without rewriting `new URL('./worker.js', import.meta.url)`,
// so the worker 404s. Vite 8's pre-bundling rewrites it; its builds never needed it.
const EXCLUDE = { optimizeDeps: { exclude: ['needle-web'] } };
export const VITE_DEV_CONFIG = { vite: {}, vite7: EXCLUDE, vite6: EXCLUDE };

const viteBuild = (module) => async (appDir, outDir) => {
  const { build } = await import(module);
  await build({ root: appDir, configFile: false, logLevel: 'error', build: { outDir, emptyOutDir: true } });
};

export const recipes = {
  ...Object.fromEntries(Object.entries(VITES).map(([name, module]) => [name, viteBuild(module)])),

  async webpack(appDir, outDir) {
    const { default: webpack } = await import('webpack');
    fresh(outDir);
    const config = { mode: 'production', context: appDir, entry: './main.js', output: { path: outDir, filename: 'main.js' } };
    const stats = await new Promise((ok, fail) => webpack(config, (err, s) => (err ? fail(err) : ok(s))));
    if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
    cpSync(join(appDir, 'index.html'), join(outDir, 'index.html'));
  },

  async esbuild(appDir, outDir, { model }) {
    const esbuild = await import('esbuild');
    fresh(outDir);
    await esbuild.build({ entryPoints: [join(appDir, 'main.js')], bundle: true, format: 'esm', outdir: outDir, logLevel: 'error' });
    copyRuntime(appDir, outDir, model);
    cpSync(join(appDir, 'index.html'), join(outDir, 'index.html'));
  },

  async rollup(appDir, outDir, { model }) {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    fresh(outDir);
    const bundle = await rollup({ input: join(appDir, 'main.js'), plugins: [nodeResolve({ browser: true })], logLevel: 'silent' });
    await bundle.write({ dir: outDir, format: 'es' });
    await bundle.close();
    copyRuntime(appDir, outDir, model);
    cpSync(join(appDir, 'index.html'), join(outDir, 'index.html'));
  },
};

/** Vite's dev server (`module`: one of VITES) on the app (not a build): resolves to { url, close() }. */
export async function viteDev(appDir, module = 'vite') {
  const { createServer } = await import(module);
  const server = await createServer({
    ...VITE_DEV_CONFIG[module],
    root: appDir,
    configFile: false,
    logLevel: 'error',
    server: { host: '127.0.0.1', port: 0, strictPort: false },
    // Test hygiene, not needle-web's needs: pre-bundle afresh for each run, inside the app.
    cacheDir: join(appDir, '.vite'),
  });
  await server.listen();
  return { url: server.resolvedUrls.local[0], close: () => server.close() };
}
