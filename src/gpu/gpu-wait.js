// The JS half of the wait seam (src/gpu/wait.rs), copied beside the `gpu` variant's glue by
// build.sh: the glue imports it as `./gpu-wait.js`. `yield_to_loop` suspends the wasm stack
// that calls it (WebAssembly.Suspending) until one message-channel round trip has let the event
// loop run, where WebGPU settles its promises; setTimeout would add its 4 ms clamp per wait.
// The package imports every glue statically, so this module must load where JSPI does not
// exist too; the gpu variant is only instantiated where it does (pkg/engine/backend.js).
// The channel is made on first use: an open port would keep a Node process that only imported
// the package alive.
let channel = null;
const waiting = [];

const roundTrip = () =>
  new Promise((resolve) => {
    if (!channel) {
      channel = new MessageChannel();
      channel.port1.onmessage = () => waiting.shift()();
    }
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });

export const yield_to_loop =
  typeof WebAssembly.Suspending === 'function'
    ? new WebAssembly.Suspending(roundTrip)
    : () => {
        throw new Error('this engine has no JSPI (WebAssembly.Suspending)');
      };
