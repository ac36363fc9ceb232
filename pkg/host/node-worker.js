// The engine host in a Node worker_threads Worker (started by host/index.js).
import { parentPort } from 'node:worker_threads';
import { serve } from '../worker.js';

serve(
  {
    postMessage: (msg, transfer) => parentPort.postMessage(msg, transfer),
    set onmessage(fn) {
      parentPort.on('message', (data) => fn({ data }));
    },
  },
  { thread: 'worker' },
);
