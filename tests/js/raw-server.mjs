// A raw HTTP/1.1 server for tests of hostile or broken hosts: it answers what a route says,
// headers and body byte for byte (an HTML page with 200, a length it does not keep, a body that
// never ends), which node:http refuses to send.
import { createServer } from 'node:net';
import { after, before, beforeEach } from 'node:test';

/**
 * A raw HTTP/1.1 server: `route(path, n)` (n: this path's request count, from 1) returns
 * `{ status, headers, body, chunked }` (`endless: true`: chunks until the client goes). Records
 * each request's path, the body bytes it wrote and whether the client closed the connection.
 */
export async function rawServer(route) {
  const log = [];
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', (data) => {
      const path = /^GET (\S+)/.exec(data.toString('latin1'))?.[1] ?? '?';
      const n = log.filter((r) => r.path === path).length + 1;
      const entry = { path, sent: 0 };
      log.push(entry);
      const r = route(path, n);
      // An endless body is chunked, unless it claims a length (then it is sent raw, past it).
      const chunked = r.chunked || (r.endless && !('Content-Length' in (r.headers ?? {})));
      const head = [`HTTP/1.1 ${r.status ?? 200} X`, 'Connection: close'];
      for (const [k, v] of Object.entries(r.headers ?? {})) head.push(`${k}: ${v}`);
      if (chunked) head.push('Transfer-Encoding: chunked');
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      const write = (bytes) => {
        entry.sent += bytes.length;
        if (!chunked) return socket.write(bytes);
        socket.write(`${bytes.length.toString(16)}\r\n`);
        socket.write(bytes);
        return socket.write('\r\n');
      };
      if (r.endless) {
        const chunk = new Uint8Array(64 * 1024).fill(7);
        const pump = () => {
          while (!socket.destroyed && write(chunk));
          if (!socket.destroyed) socket.once('drain', pump);
        };
        socket.on('close', () => (entry.closed = true));
        return pump();
      }
      write(r.body ?? new Uint8Array());
      if (chunked) socket.write('0\r\n\r\n');
      socket.end();
    });
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, log, close: () => new Promise((ok) => server.close(ok)) };
}

/** A whole octet-stream answer of `bytes` with its length. */
export const octets = (bytes, extra = {}) => ({
  body: bytes,
  headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': bytes.length, ...extra },
});

/**
 * One raw server for a test file, routed by exact path (404 elsewhere): `server.routes[path] =
 * (n) => answer`; the routes and the request log start empty in each test.
 */
export function routedServer() {
  const served = { url: '', log: [], routes: {} };
  let raw;
  before(async () => {
    raw = await rawServer((path, n) => (served.routes[path] ? served.routes[path](n) : { status: 404 }));
    served.url = raw.url;
    served.log = raw.log;
  });
  after(() => raw.close());
  beforeEach(() => {
    served.log.length = 0;
    served.routes = {};
  });
  return served;
}

/** A load's outcome without throwing: the error, or `{ ok: true }` (the handle disposed). */
export const settle = (p) => p.then((v) => (v?.dispose?.(), { ok: true }), (e) => e);
