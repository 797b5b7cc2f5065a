"""CUDA candidate for KernelBench level1/38_L1Norm_: x / mean(|x| over dim 1).

One block per row of 65 535 floats (256 KiB: more than a block's registers or shared
memory hold), in two passes: the block's sum of |x| in float32 (warp shuffles, then one
value per warp), then x divided by sum / n (a division, as the reference does, so a row of
zeros gives NaN as it does). The second read follows the first closely, so much of it
comes from L2. Rows of odd length are not 16-byte aligned: coalesced scalar loads,
four in flight per thread. int64_t offsets.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

constexpr int THREADS = 1024;

__device__ float block_sum(float v) {
  __shared__ float warps[THREADS / 32];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  float all = 0.f;
  for (int w = 0; w < THREADS / 32; ++w) all += warps[w];
  return all;
}

__global__ void __launch_bounds__(THREADS) l1_norm_rows_kernel(
    const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
  const float* xr = x + (int64_t)blockIdx.x * cols;
  float* yr = y + (int64_t)blockIdx.x * cols;
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
  int64_t i = threadIdx.x;
  for (; i + 3 * THREADS < cols; i += 4 * THREADS) {
    a0 += fabsf(xr[i]);
    a1 += fabsf(xr[i + THREADS]);
    a2 += fabsf(xr[i + 2 * THREADS]);
    a3 += fabsf(xr[i + 3 * THREADS]);
  }
  for (; i < cols; i += THREADS) a0 += fabsf(xr[i]);
  float mean = block_sum((a0 + a1) + (a2 + a3)) / (float)cols;
  for (int64_t j = threadIdx.x; j < cols; j += THREADS) yr[j] = xr[j] / mean;
}

torch::Tensor l1_norm_rows(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() == 2 &&
              x.scalar_type() == torch::kFloat32,
              "l1_norm_rows: x must be a contiguous 2-D float32 CUDA tensor");
  auto y = torch::empty_like(x);
  int64_t rows = x.size(0), cols = x.size(1);
  if (rows == 0 || cols == 0) return y;
  TORCH_CHECK(rows <= INT32_MAX, "l1_norm_rows: too many rows for one grid");
  l1_norm_rows_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), cols);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="cudaopt_tp_l1_norm_cuda",
    cpp_sources="torch::Tensor l1_norm_rows(torch::Tensor x);",
    cuda_sources=_CUDA_SRC,
    functions=["l1_norm_rows"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


@torch.library.custom_op("cudaopt::tp_l1_norm_cuda", mutates_args=())
def l1_norm_rows(x: torch.Tensor) -> torch.Tensor:
    return _ext.l1_norm_rows(x)


l1_norm_rows.register_fake(lambda x: torch.empty_like(x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l1_norm_rows(x)
