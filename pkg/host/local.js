// A pair of in-process ports with postMessage semantics (copying, asynchronous): the inline host.

export function localPorts() {
  const defer = typeof setImmediate === 'function' ? setImmediate : (f) => setTimeout(f, 0);
  const make = () => ({ other: null, onmessage: null, closed: false });
  const a = make();
  const b = make();
  a.other = b;
  b.other = a;
  for (const p of [a, b]) {
    p.postMessage = (data, transfer) => {
      if (p.closed) return;
      const copy = structuredClone(data, { transfer: transfer || [] });
      defer(() => !p.other.closed && p.other.onmessage && p.other.onmessage({ data: copy }));
    };
    p.close = () => {
      p.closed = true;
    };
  }
  return [a, b];
}
