// Pure CUDA: the kernel and an extern "C" launcher; no torch headers, so nvcc is fast.
#include <cuda_runtime.h>

#include <cstdint>

__global__ void relu_scale_kernel(const float* __restrict__ x, float* __restrict__ y,
                                  float scale, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (; i < n; i += stride) {
    float v = x[i];
    y[i] = v > 0.f ? v * scale : 0.f;
  }
}

extern "C" void relu_scale_launch(const float* x, float* y, float scale, int64_t n,
                                  cudaStream_t stream) {
  const int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535) blocks = 65535;
  relu_scale_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x, y, scale, n);
}
