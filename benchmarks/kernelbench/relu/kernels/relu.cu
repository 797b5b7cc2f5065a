// y = max(x, 0), four floats per thread in a grid-stride loop.
#include <cuda_runtime.h>
#include <cstdint>

__global__ void relu_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4;
       i += (int64_t)gridDim.x * blockDim.x) {
    float4 v = x[i];
    v.x = fmaxf(v.x, 0.0f);
    v.y = fmaxf(v.y, 0.0f);
    v.z = fmaxf(v.z, 0.0f);
    v.w = fmaxf(v.w, 0.0f);
    y[i] = v;
  }
}

extern "C" cudaError_t relu_launch(const float* x, float* y, int64_t n, cudaStream_t stream) {
  int threads = 256;
  int64_t blocks = (n / 4 + threads - 1) / threads;
  if (blocks > 132 * 32) blocks = 132 * 32;
  relu_kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<const float4*>(x),
                                              reinterpret_cast<float4*>(y), n / 4);
  return cudaGetLastError();
}
