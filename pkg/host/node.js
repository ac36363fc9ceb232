// The client's face of a Node worker_threads Worker: the Web Worker shape the client expects
// (postMessage, onmessage, onerror). The worker holds the process open only while a request is
// unanswered, so a script that forgets dispose() still exits.
import { Reply, Req } from '../protocol.js';

export function nodeWorkerHost(worker) {
  let waiting = 0;
  worker.unref();
  const settle = (msg) => {
    if (msg && (msg.type === Reply.RESULT || msg.type === Reply.ERROR) && --waiting === 0) worker.unref();
  };
  const port = {
    postMessage(msg, transfer) {
      if (msg && msg.type !== Req.ABORT && waiting++ === 0) worker.ref();
      worker.postMessage(msg, transfer);
    },
    set onmessage(fn) {
      worker.on('message', (data) => {
        settle(data);
        fn({ data });
      });
    },
  };
  const face = {
    set onerror(fn) {
      worker.on('error', (e) => (worker.unref(), fn(e)));
    },
    set onmessageerror(fn) {
      worker.on('messageerror', fn);
    },
  };
  return { port, terminate: () => void worker.terminate(), worker: face };
}
