// The package's engine worker with its GPU devices kept for webgpu.test.mjs (the `workerUrl`
// load option). Module order: the devices' hook is in place before worker.js serves.
import './webgpu-devices.mjs';
import '/pkg/worker.js';
