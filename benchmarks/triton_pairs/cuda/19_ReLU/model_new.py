"""CUDA candidate for KernelBench level1/19_ReLU: one pass over the input, one store.

A grid-stride loop over float4 (16-byte loads and stores when both pointers allow it,
with a scalar tail), indexed with int64_t: the input is 4096 x 393216 floats (6 GiB).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float relu1(float v) { return v < 0.f ? 0.f : v; }  // NaN stays

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                            int64_t n4) {
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (int64_t i = first; i < n4; i += stride) {
    float4 v = x4[i];
    y4[i] = make_float4(relu1(v.x), relu1(v.y), relu1(v.z), relu1(v.w));
  }
  for (int64_t i = n4 * 4 + first; i < n; i += stride) y[i] = relu1(x[i]);
}

torch::Tensor relu(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
              "relu: x must be a contiguous float32 CUDA tensor");
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  if (n == 0) return y;
  bool aligned = reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 &&
                 reinterpret_cast<uintptr_t>(y.data_ptr()) % 16 == 0;
  int64_t n4 = aligned ? n / 4 : 0;
  const int threads = 256;
  int64_t wanted = ((n4 ? n4 : n) + threads - 1) / threads;
  int64_t cap = (int64_t)at::cuda::getCurrentDeviceProperties()->multiProcessorCount * 8;
  int blocks = (int)std::min(wanted, cap);
  relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), y.data_ptr<float>(), n, n4);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="cudaopt_tp_relu_cuda",
    cpp_sources="torch::Tensor relu(torch::Tensor x);",
    cuda_sources=_CUDA_SRC,
    functions=["relu"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


@torch.library.custom_op("cudaopt::tp_relu_cuda", mutates_args=())
def relu(x: torch.Tensor) -> torch.Tensor:
    return _ext.relu(x)


relu.register_fake(lambda x: torch.empty_like(x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu(x)
