"""KernelBench-style candidate: its own load_inline build at import."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

// One thread per (batch, column): walk the reduced dimension; neighbours read neighbours.
__global__ void sum_mid_kernel(const float* __restrict__ x, float* __restrict__ y,
                               int64_t batch, int64_t rows, int64_t cols) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= batch * cols) return;
  int64_t b = i / cols, c = i % cols;
  const float* p = x + b * rows * cols + c;
  float acc = 0.0f;
  for (int64_t r = 0; r < rows; ++r) acc += p[r * cols];
  y[i] = acc;
}

torch::Tensor sum_mid(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() == 3 &&
              x.scalar_type() == torch::kFloat, "x: contiguous 3-D float CUDA tensor");
  auto y = torch::empty({x.size(0), 1, x.size(2)}, x.options());
  int64_t n = x.size(0) * x.size(2);
  int threads = 256;
  sum_mid_kernel<<<(n + threads - 1) / threads, threads, 0,
                   c10::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), x.size(0), x.size(1), x.size(2));
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "sum_mid launch failed");
  return y;
}
"""

sum_ext = load_inline(
    name="cudaopt_bench_sum_mid",
    cpp_sources="torch::Tensor sum_mid(torch::Tensor x);",
    cuda_sources=cuda_source,
    functions=["sum_mid"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        assert dim == 1, "this kernel reduces the middle dimension"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_ext.sum_mid(x)
