"""KernelBench's generated-kernel layout: one self-contained file that builds its kernel
with load_inline at import."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void scale_bias_relu_kernel(const float* __restrict__ x, const float* __restrict__ b,
                                       float* __restrict__ y, int64_t n, int64_t cols,
                                       float scale) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i] * scale + b[i % cols], 0.0f);
}

torch::Tensor scale_bias_relu(torch::Tensor x, torch::Tensor b, double scale) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat);
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  scale_bias_relu_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), n, x.size(1),
      static_cast<float>(scale));
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "scale_bias_relu launch failed");
  return y;
}
"""

cpp_source = "torch::Tensor scale_bias_relu(torch::Tensor x, torch::Tensor b, double scale);"

ext = load_inline(name="bench_scale_bias_relu", cpp_sources=cpp_source,
                  cuda_sources=cuda_source, functions=["scale_bias_relu"],
                  extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.scale_bias_relu(x, self.bias, self.scale)
