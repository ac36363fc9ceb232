// The client's half of the threaded build's pool. The engine's Web Worker does not start its
// thread workers itself: in Firefox (ESR 153) a `new Worker` called in a worker now and then never
// returns and blocks that worker for good (seen on a busy machine: right after a dispose, and on
// page loads), which left `Needle.load()` silent at 'init' (issue 42). It asks its client instead
// (protocol.js Reply.THREADS); the client starts them here, on its own thread, and keeps them for
// the engine's life.
import { Reply, Req } from '../protocol.js';
import { spawnThreads } from '../threads.js';

/**
 * Answers `worker`'s requests for pool threads, started from `script` (thread.js beside the
 * engine's worker script, where that is not the package's own: spawn.js) or the package's
 * thread.js. Returns `terminate()`, which ends the threads it started (and any still starting).
 */
export function servePoolThreads(worker, script) {
  const threads = [];
  let ended = false;
  worker.addEventListener('message', ({ data }) => {
    if (!data || data.type !== Reply.THREADS) return;
    const answer = (error) =>
      !ended && worker.postMessage({ type: Req.THREADS, target: data.id, error });
    spawnThreads(data.init, data.count, { script }).then(
      (started) => {
        threads.push(...started);
        if (ended) terminate();
        answer();
      },
      (e) => answer(String((e && e.message) || e)),
    );
  });
  const terminate = () => {
    ended = true;
    for (const t of threads.splice(0)) t.terminate();
  };
  return terminate;
}
