// Models by name: `needle3`, `needle2` (upstream's published weights) or a Hugging Face Hub
// repository `owner/repo`, resolved to the file URL of the Hub's layout,
//   {host}/{owner}/{repo}/resolve/{revision}/{file}
// which then loads like any URL (storage, resume, integrity). A repository named without a `file`
// is listed once (`{host}/api/models/{owner}/{repo}/tree/{revision}`) for its one `.cact`. The
// host is the Hub unless a mirror is named: the `modelHost` option, else `setModelHost()`.
import { NeedleError } from './protocol.js';
import { fetcher } from './storage/download.js';

export const HUB = 'https://huggingface.co';

/** Upstream's published models (Cactus Compute on the Hub). */
export const KNOWN_MODELS = Object.freeze({
  needle3: Object.freeze({ repo: 'Cactus-Compute/needle3', file: 'needle3.cact' }),
  needle2: Object.freeze({ repo: 'Cactus-Compute/needle2', file: 'needle2.cact' }),
});

// `owner/repo` as the Hub spells them; a path ending in `.cact` is a (relative) URL instead.
const REPO = /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/;

let packageHost = null;

/** The host every later name resolves against (a mirror, a self-hosted copy); null: the Hub. */
export function setModelHost(host) {
  packageHost = host === null || host === undefined ? null : hostOf(host);
}

/** The host names resolve against when no `modelHost` option is given. */
export function modelHost() {
  return packageHost ?? HUB;
}

function hostOf(host) {
  const s = String(host);
  if (!s) throw new NeedleError('invalid_argument', 'modelHost must be a URL');
  return s.replace(/\/+$/, '');
}

/** Whether `source` is a model name (a known model or `owner/repo`) rather than a URL. */
export function isModelName(source) {
  if (typeof source !== 'string') return false;
  return Object.hasOwn(KNOWN_MODELS, source) || (REPO.test(source) && !/\.cact$/i.test(source));
}

/**
 * `value` as a path inside the repository: refused (`invalid_argument`) when one of its segments is
 * empty, `.` or `..`, which a URL resolves out of the `resolve/{revision}/` folder (issue 51).
 */
function insidePath(what, value) {
  const s = String(value);
  if (s.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) {
    const shown = s.length > 200 ? `${s.slice(0, 200)}...` : s;
    throw new NeedleError('invalid_argument', `${what} '${shown}' has an empty, . or .. segment`);
  }
  return s;
}

function fileUrl(host, repo, revision, file) {
  const path = file.split('/').map(encodeURIComponent).join('/');
  return `${host}/${repo}/resolve/${encodeURIComponent(revision)}/${path}`;
}

/**
 * The file URL a model name stands for: `{ url, repo, revision, file, size }` (`size`: the
 * bytes the Hub's listing gives the file, when it was listed; else null).
 * options: { revision = 'main', file, modelHost, fetch, signal }.
 */
export async function resolveModel(name, options = {}) {
  const known = Object.hasOwn(KNOWN_MODELS, name) ? KNOWN_MODELS[name] : null;
  const repo = known ? known.repo : String(name);
  if (!REPO.test(repo))
    throw new NeedleError('invalid_argument', `'${repo.slice(0, 200)}' is not a model name`);
  const revision = insidePath('revision', options.revision ?? 'main');
  const host = options.modelHost != null ? hostOf(options.modelHost) : modelHost();
  const { path, size } =
    options.file != null
      ? { path: insidePath('file', options.file), size: null }
      : known
        ? { path: known.file, size: null }
        : await onlyModelFile(host, repo, revision, options);
  return { url: fileUrl(host, repo, revision, path), repo, revision, file: path, size };
}

/** The listing's size of a file (its LFS object's, else its own), or null. */
function listedSize(entry) {
  const size = entry.lfs && typeof entry.lfs === 'object' ? entry.lfs.size : entry.size;
  return Number.isSafeInteger(size) && size > 0 ? size : null;
}

/**
 * The one `.cact` at the top of `repo` at `revision`, from the Hub's file listing: `{ path, size }`.
 */
async function onlyModelFile(host, repo, revision, { fetch, signal }) {
  const url = `${host}/api/models/${repo}/tree/${encodeURIComponent(revision)}`;
  let entries;
  try {
    const response = await fetcher(fetch)(url, { signal, headers: { accept: 'application/json' } });
    if (!response.ok) {
      const why = `${repo} at ${revision}: listing its files answered HTTP ${response.status}`;
      throw new NeedleError('fetch_failed', why, { status: response.status });
    }
    entries = await response.json();
  } catch (e) {
    if (e instanceof NeedleError) throw e;
    if (signal && signal.aborted) throw new NeedleError('aborted', 'load aborted');
    throw new NeedleError('fetch_failed', `${repo}: cannot list its files (${e.message})`);
  }
  const listed = (Array.isArray(entries) ? entries : []).filter(
    (e) => e && e.type === 'file' && typeof e.path === 'string' && /\.cact$/i.test(e.path),
  );
  const models = listed.map((e) => e.path);
  if (models.length === 1)
    return { path: insidePath('the listed file', models[0]), size: listedSize(listed[0]) };
  const why = models.length
    ? `has ${models.length} .cact files (${models.join(', ')}): name one with { file }`
    : 'has no .cact file';
  const message = `the Hugging Face repository ${repo} at ${revision} ${why}`;
  throw new NeedleError('bad_source', message, { files: models });
}
