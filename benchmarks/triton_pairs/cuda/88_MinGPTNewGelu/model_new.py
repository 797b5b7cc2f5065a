"""CUDA candidate for KernelBench level1/88_MinGPTNewGelu: the tanh-GELU chain in one pass.

0.5 * (1 + tanh(u)) equals 1 / (1 + exp(-2u)) exactly, so each element costs one exp:
x / (1 + exp(-2u)) with u = sqrt(2/pi) * (x + 0.044715 x^3), which saturates cleanly
(x -> -inf gives -0, x -> +inf gives x). A grid-stride loop over float4 with a scalar tail,
int64_t indices; one read and one write where the reference makes five passes.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float gelu1(float x) {
  float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);  // sqrt(2 / pi)
  return x / (1.f + expf(-2.f * u));
}

__global__ void new_gelu_kernel(const float* __restrict__ x, float* __restrict__ y,
                                int64_t n, int64_t n4) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (int64_t i = first; i < n4; i += stride) {
    float4 v = x4[i];
    y4[i] = make_float4(gelu1(v.x), gelu1(v.y), gelu1(v.z), gelu1(v.w));
  }
  for (int64_t i = n4 * 4 + first; i < n; i += stride) y[i] = gelu1(x[i]);
}

torch::Tensor new_gelu(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "new_gelu: x must be a contiguous float32 CUDA tensor");
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  if (n == 0) return y;
  bool aligned = reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 &&
                 reinterpret_cast<uintptr_t>(y.data_ptr()) % 16 == 0;
  int64_t n4 = aligned ? n / 4 : 0;
  const int threads = 256;
  int64_t wanted = ((n4 ? n4 : n) + threads - 1) / threads;
  int64_t cap = (int64_t)at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 8;
  new_gelu_kernel<<<(int)std::min(wanted, cap), threads, 0,
                    at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n, n4);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="cudaopt_tp_new_gelu_cuda",
    cpp_sources="torch::Tensor new_gelu(torch::Tensor x);",
    cuda_sources=_CUDA_SRC,
    functions=["new_gelu"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


@torch.library.custom_op("cudaopt::tp_new_gelu_cuda", mutates_args=())
def new_gelu(x: torch.Tensor) -> torch.Tensor:
    return _ext.new_gelu(x)


new_gelu.register_fake(lambda x: torch.empty_like(x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return new_gelu(x)
