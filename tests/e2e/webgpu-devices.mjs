// Imported first by webgpu-worker.mjs: keeps every GPUDevice the engine's worker requests on
// `self.__gpuDevices`, so webgpu.test.mjs can destroy one (as a driver reset would lose it).
const devices = [];
self.__gpuDevices = devices;
const requestDevice = GPUAdapter.prototype.requestDevice;
GPUAdapter.prototype.requestDevice = async function (...args) {
  const device = await requestDevice.apply(this, args);
  devices.push(device);
  return device;
};
