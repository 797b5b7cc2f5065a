"""CUDA candidate for KernelBench level1/47_Sum_reduction_over_a_dimension.

The input (128, 4096, 4095) is seen as (outer, reduced, inner). A block of 32 x 8 threads
owns 32 contiguous inner columns of one outer index: each warp reads 32 neighbours of one
row (coalesced), the 8 warps split the reduced dimension, each thread keeps four float32
partial sums in flight, and shared memory merges the 8 at the end: 8 GiB read once,
2 MiB written. Any `dim` works; int64_t offsets.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

constexpr int COLS = 32, SPLIT = 8;

__global__ void __launch_bounds__(COLS * SPLIT) sum_mid_kernel(
    const float* __restrict__ x, float* __restrict__ y, int64_t R, int64_t inner,
    int64_t col_blocks) {
  __shared__ float part[SPLIT][COLS + 1];
  int64_t o = blockIdx.x / col_blocks;
  int64_t col = (blockIdx.x % col_blocks) * COLS + threadIdx.x;
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
  if (col < inner) {
    const float* p = x + o * R * inner + col;
    int64_t r = threadIdx.y;
    for (; r + 3 * SPLIT < R; r += 4 * SPLIT) {
      a0 += p[r * inner];
      a1 += p[(r + SPLIT) * inner];
      a2 += p[(r + 2 * SPLIT) * inner];
      a3 += p[(r + 3 * SPLIT) * inner];
    }
    for (; r < R; r += SPLIT) a0 += p[r * inner];
  }
  part[threadIdx.y][threadIdx.x] = (a0 + a1) + (a2 + a3);
  __syncthreads();
  if (threadIdx.y == 0 && col < inner) {
    float s = 0.f;
    for (int k = 0; k < SPLIT; ++k) s += part[k][threadIdx.x];
    y[o * inner + col] = s;
  }
}

torch::Tensor sum_dim(torch::Tensor x, int64_t dim) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() >= 1 &&
              x.scalar_type() == torch::kFloat32,
              "sum_dim: x must be a contiguous float32 CUDA tensor");
  dim = ((dim % x.dim()) + x.dim()) % x.dim();
  int64_t outer = 1, inner = 1, R = x.size(dim);
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  auto shape = x.sizes().vec();
  shape[dim] = 1;
  auto y = torch::empty(shape, x.options());
  if (y.numel() == 0) return y;
  int64_t col_blocks = (inner + COLS - 1) / COLS, blocks = outer * col_blocks;
  TORCH_CHECK(blocks <= INT32_MAX, "sum_dim: too many columns for one grid");
  sum_mid_kernel<<<(unsigned)blocks, dim3(COLS, SPLIT), 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), R, inner, col_blocks);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="cudaopt_tp_sum_dim_cuda",
    cpp_sources="torch::Tensor sum_dim(torch::Tensor x, int64_t dim);",
    cuda_sources=_CUDA_SRC,
    functions=["sum_dim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


@torch.library.custom_op("cudaopt::tp_sum_dim_cuda", mutates_args=())
def sum_dim(x: torch.Tensor, dim: int) -> torch.Tensor:
    return _ext.sum_dim(x, dim)


@sum_dim.register_fake
def _(x: torch.Tensor, dim: int) -> torch.Tensor:
    shape = list(x.shape)
    shape[dim % x.dim()] = 1
    return x.new_empty(shape)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_dim(x, self.dim)
