"""CUDA candidate for KernelBench level1/23_Softmax: softmax over rows of 393 216 floats.

One block per row, two passes over it (a row is 1.5 MiB: no shared memory holds it). Pass
one keeps each thread's running (max, sum) online: a new max rescales the sum, so exp only
sees x - max <= 0 and never overflows; the block then merges the threads' pairs. Pass two
stores exp(x - max) / sum. float32 throughout, float4 loads when the row is 16-byte
aligned, int64_t offsets (4096 x 393216 = 1.6e9 elements).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 512;

struct MaxSum { float m, s; };

__device__ __forceinline__ void push(MaxSum& a, float v) {
  if (v > a.m) { a.s = a.s * __expf(a.m - v) + 1.f; a.m = v; }  // a.m = -inf: 0 * 0 + 1
  else if (v != -INFINITY) a.s += __expf(v - a.m);               // NaN propagates, as torch's
}

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.f};
  return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}

__device__ MaxSum block_merge(MaxSum v) {
  __shared__ MaxSum warps[THREADS / 32];
  for (int off = 16; off > 0; off >>= 1)
    v = merge(v, {__shfl_xor_sync(0xffffffff, v.m, off), __shfl_xor_sync(0xffffffff, v.s, off)});
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  MaxSum all = warps[0];
  for (int w = 1; w < THREADS / 32; ++w) all = merge(all, warps[w]);
  return all;
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS) softmax_rows_kernel(
    const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  const float* xr = x + (int64_t)blockIdx.x * cols;
  float* yr = y + (int64_t)blockIdx.x * cols;
  MaxSum acc = {-INFINITY, 0.f};
  if (VEC) {
    for (int64_t i = threadIdx.x; i < cols / 4; i += THREADS) {
      float4 v = reinterpret_cast<const float4*>(xr)[i];
      push(acc, v.x); push(acc, v.y); push(acc, v.z); push(acc, v.w);
    }
  } else {
    for (int64_t i = threadIdx.x; i < cols; i += THREADS) push(acc, xr[i]);
  }
  MaxSum row = block_merge(acc);
  float shift = row.m == -INFINITY ? 0.f : row.m;
  float inv = 1.f / row.s;
  if (VEC) {
    for (int64_t i = threadIdx.x; i < cols / 4; i += THREADS) {
      float4 v = reinterpret_cast<const float4*>(xr)[i];
      reinterpret_cast<float4*>(yr)[i] =
          make_float4(__expf(v.x - shift) * inv, __expf(v.y - shift) * inv,
                      __expf(v.z - shift) * inv, __expf(v.w - shift) * inv);
    }
  } else {
    for (int64_t i = threadIdx.x; i < cols; i += THREADS) yr[i] = __expf(xr[i] - shift) * inv;
  }
}

torch::Tensor softmax_rows(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() == 2 &&
              x.scalar_type() == torch::kFloat32,
              "softmax_rows: x must be a contiguous 2-D float32 CUDA tensor");
  auto y = torch::empty_like(x);
  int64_t rows = x.size(0), cols = x.size(1);
  if (rows == 0 || cols == 0) return y;
  TORCH_CHECK(rows <= INT32_MAX, "softmax_rows: too many rows for one grid");
  bool vec = cols % 4 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 &&
             reinterpret_cast<uintptr_t>(y.data_ptr()) % 16 == 0;
  auto stream = at::cuda::getCurrentCUDAStream();
  if (vec)
    softmax_rows_kernel<true><<<(int)rows, THREADS, 0, stream>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), cols);
  else
    softmax_rows_kernel<false><<<(int)rows, THREADS, 0, stream>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), cols);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="cudaopt_tp_softmax_cuda",
    cpp_sources="torch::Tensor softmax_rows(torch::Tensor x);",
    cuda_sources=_CUDA_SRC,
    functions=["softmax_rows"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


@torch.library.custom_op("cudaopt::tp_softmax_cuda", mutates_args=())
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    return _ext.softmax_rows(x)


softmax_rows.register_fake(lambda x: torch.empty_like(x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_rows(x)
