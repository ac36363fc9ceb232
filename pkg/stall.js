// A bound on a load's silence. A load reports progress as it downloads, reads and starts the
// engine; one that goes `ms` without a word (a connection that stalls with no error, an engine
// thread blocked for good) would otherwise leave `Needle.load()` pending forever, so it fails
// with a NeedleError('timeout') instead. The clock runs on the calling thread, which a blocked
// engine worker cannot stop.
import { NeedleError } from './protocol.js';

/** The silence a load may keep by default: longer than any one silent step (compiling, threads). */
export const LOAD_STALL_MS = 120_000;

/**
 * Calls `onStall()` once `ms` pass without `alive()`; `stop()` ends the watch. A non-finite or
 * non-positive `ms` never fires.
 */
export function watchStall(ms, onStall) {
  let timer = null;
  const stop = () => clearTimeout(timer);
  const alive = () => {
    stop();
    if (Number.isFinite(ms) && ms > 0) timer = setTimeout(onStall, ms);
  };
  alive();
  return { alive, stop };
}

/**
 * Runs `task(signal, alive)` on this thread under the same bound: `alive()` on each sign of
 * progress; `ms` of silence aborts `signal` and rejects with NeedleError('timeout'). `outer`
 * (the caller's signal) aborts it too.
 */
export async function withinStallBound(ms, outer, task) {
  const ctl = new AbortController();
  const forward = () => ctl.abort();
  if (outer) {
    if (outer.aborted) ctl.abort();
    else outer.addEventListener('abort', forward, { once: true });
  }
  let stalled = null;
  const watch = watchStall(ms, () => {
    stalled = new NeedleError('timeout', `the download made no progress for ${ms} ms`);
    ctl.abort();
  });
  try {
    return await task(ctl.signal, watch.alive);
  } catch (e) {
    throw stalled ?? e;
  } finally {
    watch.stop();
    if (outer) outer.removeEventListener('abort', forward);
  }
}
