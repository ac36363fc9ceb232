// The package's engine worker with its WebGPU adapter presented as hardware, for
// webgpu.test.mjs (the `workerUrl` load option). Module order: the mask is in place before
// worker.js serves.
import './webgpu-hardware.mjs';
import '/pkg/worker.js';
