// One pass over x: y = clamp(x * sigmoid(x) * scale + bias[col], -1, 1), four floats a thread.
#include <cuda_runtime.h>
#include <cstdint>

__device__ __forceinline__ float swish_one(float v, float scale, float b) {
  float s = v / (1.0f + __expf(-v)) * scale + b;
  return fminf(fmaxf(s, -1.0f), 1.0f);
}

__global__ void fused_swish_kernel(const float4* __restrict__ x, const float* __restrict__ bias,
                                   float4* __restrict__ y, int64_t n4, int64_t cols,
                                   float scale) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n4) return;
  float4 v = x[i];
  int64_t c = (i * 4) % cols;
  v.x = swish_one(v.x, scale, bias[c]);
  v.y = swish_one(v.y, scale, bias[c + 1]);
  v.z = swish_one(v.z, scale, bias[c + 2]);
  v.w = swish_one(v.w, scale, bias[c + 3]);
  y[i] = v;
}

extern "C" cudaError_t fused_swish_launch(const float* x, const float* bias, float* y,
                                          int64_t rows, int64_t cols, float scale,
                                          cudaStream_t stream) {
  int64_t n4 = rows * cols / 4;
  int threads = 256;
  int64_t blocks = (n4 + threads - 1) / threads;
  fused_swish_kernel<<<blocks, threads, 0, stream>>>(
      reinterpret_cast<const float4*>(x), bias, reinterpret_cast<float4*>(y), n4, cols, scale);
  return cudaGetLastError();
}
