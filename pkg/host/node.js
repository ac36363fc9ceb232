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
  let ended = false; // terminate() was called: the exit that follows is expected
  const face = {
    set onerror(fn) {
      worker.on('error', (e) => (worker.unref(), fn(e)));
      // A worker that exits on its own (process.exit in a dependency, out of memory) fails what waits.
      worker.on('exit', (code) => ended || fn(new Error(`the engine's worker thread exited (code ${code})`)));
    },
    set onmessageerror(fn) {
      worker.on('messageerror', fn);
    },
  };
  const terminate = () => {
    ended = true;
    void worker.terminate();
  };
  return { port, terminate, worker: face };
}
