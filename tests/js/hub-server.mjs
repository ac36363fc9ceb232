// A local stand-in for the Hugging Face Hub's file layout, so no test reaches the network:
//   GET /api/models/{owner}/{repo}/tree/{revision}   the file listing (JSON, as the Hub's API)
//   GET /{owner}/{repo}/resolve/{revision}/{file}    302 to /blobs/{sha256}, as the Hub redirects
//   GET /blobs/{sha256}                              the bytes: strong ETag, Range, If-Range
// with CORS on everything (the Hub allows any origin) and Cross-Origin-Resource-Policy, so
// cross-origin isolated pages on another origin can load from it. `cutOnce(path, after)` ends the
// next response for `path` after `after` bytes, to prove a download resumes.
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'range, if-range, authorization, accept',
  'Access-Control-Expose-Headers': 'content-range, content-length, etag, accept-ranges, location',
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

/**
 * `repos`: { 'owner/repo': { revision: { 'file/path': Uint8Array } } }. Resolves to
 * `{ url, requests: [{method, path, status, range}], cutOnce(path, after), close() }`.
 */
export async function startHub(repos) {
  const blobs = new Map(); // sha256 -> bytes
  const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');
  for (const revisions of Object.values(repos)) {
    for (const files of Object.values(revisions)) for (const bytes of Object.values(files)) blobs.set(sha(bytes), bytes);
  }
  const requests = [];
  const cuts = new Map();
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://hub');
    const path = decodeURIComponent(url.pathname);
    const send = (status, headers, body) => {
      requests.push({ method: req.method, path: url.pathname, status, range: req.headers.range ?? null });
      res.writeHead(status, { ...CORS, ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const notFound = (what) => send(404, { 'Content-Type': 'application/json' }, JSON.stringify({ error: `${what} not found` }));
    if (req.method === 'OPTIONS') return send(204, {}, '');
    let m = /^\/api\/models\/([^/]+\/[^/]+)\/tree\/(.+)$/.exec(path);
    if (m) {
      const files = repos[m[1]]?.[m[2]];
      if (!files) return notFound('Repository or revision');
      const listing = Object.entries(files).map(([p, bytes]) => ({
        type: 'file',
        oid: sha(bytes).slice(0, 40),
        size: bytes.length,
        path: p,
        lfs: { oid: sha(bytes), size: bytes.length, pointerSize: 134 },
      }));
      return send(200, { 'Content-Type': 'application/json' }, JSON.stringify([{ type: 'directory', oid: '0', size: 0, path: 'docs' }, ...listing]));
    }
    m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    if (m) {
      const bytes = repos[m[1]]?.[m[2]]?.[m[3]];
      if (!bytes) return notFound('Entry');
      return send(302, { Location: `/blobs/${sha(bytes)}`, 'X-Repo-Commit': '0'.repeat(40) }, '');
    }
    m = /^\/blobs\/([0-9a-f]{64})$/.exec(path);
    if (!m || !blobs.has(m[1])) return notFound('Blob');
    const bytes = blobs.get(m[1]);
    const etag = `"${m[1]}"`;
    const headers = { 'Content-Type': 'application/octet-stream', 'Accept-Ranges': 'bytes', ETag: etag };
    const range = /^bytes=(\d+)-$/.exec(req.headers.range || '');
    const ifRange = req.headers['if-range'];
    let start = 0;
    let status = 200;
    if (range && (!ifRange || ifRange === etag) && Number(range[1]) < bytes.length) {
      start = Number(range[1]);
      status = 206;
      headers['Content-Range'] = `bytes ${start}-${bytes.length - 1}/${bytes.length}`;
    }
    const body = bytes.subarray(start);
    headers['Content-Length'] = String(body.length);
    const cut = cuts.get(url.pathname);
    if (cut !== undefined && req.method === 'GET') {
      // Headers promise the whole body; the connection dies part way through it.
      cuts.delete(url.pathname);
      requests.push({ method: req.method, path: url.pathname, status, range: req.headers.range ?? null, cut: true });
      res.writeHead(status, { ...CORS, ...headers });
      res.write(body.subarray(0, cut), () => res.destroy());
      return;
    }
    send(status, headers, body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    sha256: sha,
    cutOnce: (path, after) => cuts.set(path, after),
    close: () => new Promise((ok) => (server.closeAllConnections(), server.close(ok))),
  };
}
