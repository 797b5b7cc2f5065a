"""KernelBench-style candidate: builds its own kernel with load_inline at import."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void softplus_affine_kernel(const float* __restrict__ x, float* __restrict__ y,
                                       int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    float sp = v > 20.0f ? v : log1pf(__expf(v));
    y[i] = sp * 2.0f - 1.0f;
  }
}

torch::Tensor softplus_affine(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat);
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  softplus_affine_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n);
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "softplus_affine launch failed");
  return y;
}
"""

cpp_source = "torch::Tensor softplus_affine(torch::Tensor x);"

softplus_ext = load_inline(
    name="cudaopt_example_softplus_affine",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softplus_affine"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softplus_ext.softplus_affine(x)
