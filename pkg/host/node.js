// The client's face of a Node worker_threads Worker: the Web Worker shape the client expects
// (postMessage, onmessage) and its death. The worker holds the process open only while a request is
// unanswered, so a script that forgets dispose() still exits.
import { Reply, Req } from '../protocol.js';

export function nodeWorkerHost(worker) {
  let waiting = 0;
  worker.unref();
  const settle = (msg) => {
    if (msg && (msg.type === Reply.RESULT || msg.type === Reply.ERROR) && --waiting === 0)
      worker.unref();
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
  // Any other end of the thread (a crash, an out-of-memory kill, process.exit in it) is an `exit`.
  const onDeath = (cb) => {
    worker.on('error', (e) => (worker.unref(), cb(`uncaught error: ${e && e.message}`)));
    worker.on('messageerror', () => cb('a message could not be decoded'));
    worker.on('exit', (code) => (worker.unref(), ended || cb(`it exited with code ${code}`)));
  };
  const terminate = () => {
    ended = true;
    void worker.terminate();
  };
  return { port, terminate, worker, onDeath };
}
