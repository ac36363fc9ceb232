//! The threaded build's thread pool (features `web` + `threads`, wasm32 with atomics): rayon's
//! global pool, whose threads are module Web Workers sharing this instance's memory.
//!
//! A browser thread cannot be spawned from Rust, so the JS side starts them (pkg/thread.js):
//!
//! 1. the engine worker starts `n` thread workers and posts each [`pool_module`] and
//!    [`pool_memory`];
//! 2. each instantiates the module over that memory and calls [`pool_thread`], which blocks until
//!    the pool hands it its rayon thread, then runs rayon's loop for the life of the page;
//! 3. once every thread worker is up, the engine worker calls [`start_pool`]: rayon hands one
//!    thread to each waiting worker and the kernels' parallel products run on them.
//!
//! The same hand-off wasm-bindgen-rayon makes, but with the workers written in the package, so the
//! package's own layout and bundlers decide how the thread script finds the glue (its helper
//! imports the glue by `import.meta.url` or a `../../..` path, which do not both survive bundling
//! and serving the package as plain files).
use std::sync::{Condvar, Mutex};
use std::vec::Vec;

use rayon::ThreadBuilder;
use wasm_bindgen::prelude::*;

use super::js::error;
use crate::Error;

/// rayon threads waiting for a worker to run them.
static WAITING: Mutex<Vec<ThreadBuilder>> = Mutex::new(Vec::new());
static HANDED: Condvar = Condvar::new();

/// This instance's compiled module, for the thread workers to instantiate.
#[wasm_bindgen(js_name = poolModule)]
pub fn pool_module() -> JsValue {
    wasm_bindgen::module()
}

/// This instance's shared memory, for the thread workers to instantiate over.
#[wasm_bindgen(js_name = poolMemory)]
pub fn pool_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// In a thread worker: waits for a rayon thread and runs it (never returns while the pool lives).
#[wasm_bindgen(js_name = poolThread)]
pub fn pool_thread() {
    let thread = {
        let mut waiting = WAITING.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(t) = waiting.pop() {
                break t;
            }
            waiting = HANDED.wait(waiting).unwrap_or_else(|e| e.into_inner());
        }
    };
    thread.run();
}

/// In the engine worker, once `threads` thread workers wait in [`pool_thread`]: builds rayon's
/// global pool on them. Blocks until every one runs. Fails if a pool exists already.
#[wasm_bindgen(js_name = startPool)]
pub fn start_pool(threads: usize) -> Result<(), JsValue> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .spawn_handler(|thread| {
            WAITING.lock().unwrap_or_else(|e| e.into_inner()).push(thread);
            HANDED.notify_one();
            Ok(())
        })
        .build_global()
        .map_err(|_| {
            error(Error::InvalidArgument {
                name: "threads",
                reason: "the thread pool could not be built (it already exists)",
            })
        })?;
    crate::kernels::parallel::wasm_pool_started();
    Ok(())
}

/// Sets the least work (multiply-adds) worth a chunk of its own: `1` splits every product, as the
/// e2e tests do to compare every split result with the one-thread build's.
#[wasm_bindgen(js_name = setMinChunkWork)]
pub fn set_min_chunk_work(work: f64) {
    crate::kernels::parallel::set_min_chunk_work(if work >= 1.0 {
        work.min(usize::MAX as f64) as usize
    } else {
        1
    });
}

/// Threads the kernels split products across (1 until [`start_pool`]).
#[wasm_bindgen(js_name = poolThreads)]
pub fn pool_threads() -> usize {
    crate::kernels::parallel::threads()
}
