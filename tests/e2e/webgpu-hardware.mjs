// Imported first by webgpu-hardware-worker.mjs: SwiftShader's adapter presented as a hardware one
// (its info names no CPU implementation and says it is no fallback), so webgpu.test.mjs can run
// backend 'auto''s real background path (the gpu build prepared beside the CPU build, both
// calibrated, the choice remembered, a remembered GPU adopted) in a browser without a GPU. With
// `?lose` on the worker's URL, every device is lost as soon as it is granted (a driver reset
// during the background preparation).
const info = Object.getOwnPropertyDescriptor(GPUAdapter.prototype, 'info');
Object.defineProperty(GPUAdapter.prototype, 'info', {
  configurable: true,
  get() {
    const real = info.get.call(this);
    const masked = {};
    for (const k in real) masked[k] = real[k];
    return {
      ...masked,
      vendor: 'e2e',
      architecture: 'masked-adapter',
      description: 'a CPU adapter presented as hardware',
      isFallbackAdapter: false,
    };
  },
});

if (new URL(self.location.href).searchParams.has('lose')) {
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = async function (...args) {
    const device = await requestDevice.apply(this, args);
    device.destroy();
    return device;
  };
}
