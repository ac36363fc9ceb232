//! The GPU backend (feature `gpu`): wgpu natively and, in the browser's `gpu` wasm variant, on
//! WebGPU. [`wait`] is the one place a GPU future or buffer map is waited for; [`probe`] opens
//! a device and proves it computes.
pub mod probe;
pub mod wait;
