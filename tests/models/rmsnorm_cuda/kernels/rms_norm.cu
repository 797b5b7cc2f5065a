// bf16 RMSNorm, one block per row. Every step rounds to bf16 where PyTorch's eager
// x * rsqrt(mean(x^2) + eps) * w does, so the result matches it closely.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>

__device__ __forceinline__ float rb(float v) { return __bfloat162float(__float2bfloat16(v)); }

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void rms_norm_bf16_kernel(const __nv_bfloat16* __restrict__ x,
                                     const __nv_bfloat16* __restrict__ w,
                                     __nv_bfloat16* __restrict__ y, int64_t cols, float eps) {
  const __nv_bfloat16* xr = x + blockIdx.x * cols;
  __nv_bfloat16* yr = y + blockIdx.x * cols;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = __bfloat162float(xr[c]);
    sum += rb(v * v);
  }
  __shared__ float partial[32];
  sum = warp_sum(sum);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < (blockDim.x >> 5) ? partial[threadIdx.x] : 0.0f;
    sum = warp_sum(sum);
    if (threadIdx.x == 0) partial[0] = sum;
  }
  __syncthreads();
  const float inv = rb(rsqrtf(rb(rb(partial[0] / static_cast<float>(cols)) + eps)));
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float scaled = rb(__bfloat162float(xr[c]) * inv);
    yr[c] = __float2bfloat16(scaled * __bfloat162float(w[c]));
  }
}

extern "C" cudaError_t rms_norm_bf16_launch(const void* x, const void* w, void* y, int64_t rows,
                                            int64_t cols, float eps, cudaStream_t stream) {
  rms_norm_bf16_kernel<<<static_cast<unsigned>(rows), 256, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(w),
      static_cast<__nv_bfloat16*>(y), cols, eps);
  return cudaGetLastError();
}
