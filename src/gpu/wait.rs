//! The wait seam: every GPU future (adapter, device, error scope) and every buffer map the
//! backend waits for goes through here, so the same synchronous code runs natively and in the
//! browser.
//!
//! Natively, `pollster` blocks the thread and `Device::poll` drives the queue. In wasm32 a
//! thread cannot block: WebGPU settles its promises on the event loop. There, each wait yields
//! to the loop through `yield_to_loop`, a raw import from `./gpu-wait.js` (beside the glue,
//! `src/gpu/gpu-wait.js`) that JS wraps in `WebAssembly.Suspending`: the wasm stack is suspended
//! until a message-channel round trip later, so the caller must be an export entered through
//! `WebAssembly.promising` (pkg/engine/call.js). The import is not a wasm-bindgen one: a
//! `#[wasm_bindgen]` import would put a JS frame between the export and the suspension.
use core::future::Future;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::Result;

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "./gpu-wait.js")]
extern "C" {
    /// Suspends until the event loop has run once (WebGPU's promises settle there).
    fn yield_to_loop();
}

/// Runs `future` to completion.
#[cfg(not(target_arch = "wasm32"))]
pub fn block_on<F: Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// Runs `future` to completion. wgpu's WebGPU futures are settled by JS promise callbacks, which
/// run on the event loop, not through the waker: so poll, and yield to the loop until ready.
#[cfg(target_arch = "wasm32")]
pub fn block_on<F: Future>(future: F) -> F::Output {
    use core::task::{Context, Poll, Waker};
    let mut future = core::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        // SAFETY: an import without arguments or results; JS suspends and resumes this stack.
        unsafe { yield_to_loop() };
    }
}

/// Waits until a `map_async` callback has set `done`. Natively the device is polled until its
/// queue is idle (which runs the callback); a failed poll is a lost device.
#[cfg(not(target_arch = "wasm32"))]
pub fn wait_mapped(device: &wgpu::Device, done: &AtomicBool) -> Result<()> {
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| crate::Error::GpuLost { reason: e.to_string() })?;
    if done.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err(crate::Error::GpuLost { reason: "a buffer map never completed".into() })
    }
}

/// Waits until a `map_async` callback has set `done`. WebGPU settles every `mapAsync` (a lost
/// device rejects it), so the callback always runs and this loop ends.
#[cfg(target_arch = "wasm32")]
pub fn wait_mapped(_device: &wgpu::Device, done: &AtomicBool) -> Result<()> {
    while !done.load(Ordering::Acquire) {
        // SAFETY: as in `block_on`.
        unsafe { yield_to_loop() };
    }
    Ok(())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use core::pin::Pin;
    use core::task::{Context, Poll};

    /// Pending `left` times (waking itself each time), then ready with `left`'s start.
    struct Countdown {
        left: u32,
        start: u32,
    }

    impl Future for Countdown {
        type Output = u32;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u32> {
            if self.left == 0 {
                return Poll::Ready(self.start);
            }
            self.left -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn block_on_runs_a_future_that_is_pending_first() {
        assert_eq!(block_on(Countdown { left: 3, start: 3 }), 3);
    }
}
