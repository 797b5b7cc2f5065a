"""CUDA candidate for KernelBench level1/36_RMSNorm_: x / sqrt(mean(x^2 over dim 1) + eps).

The input is (112, 64, 512, 512): each thread owns one (batch, position) and its 64
features, 262 144 floats apart, so a warp's loads of one feature are coalesced. With up
to 64 features the values stay in registers (fully unrolled) between the sum of squares
and the store: the 7.5 GiB input is read once, where the reference reads it three times.
More features take a second read. float32 sums, int64_t offsets.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

constexpr int IN_REGS = 64;  // features held in registers; more take a second read

template <bool REGS>
__global__ void rms_norm_kernel(const float* __restrict__ x, float* __restrict__ y, int C,
                                int64_t S, int64_t total, float eps) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;  // over batch x positions
  if (i >= total) return;
  int64_t b = i / S;
  int64_t at = b * C * S + (i - b * S);
  const float* p = x + at;
  float* q = y + at;
  float sq = 0.f;
  if (REGS) {
    float v[IN_REGS];
#pragma unroll
    for (int c = 0; c < IN_REGS; ++c) {
      v[c] = c < C ? p[c * S] : 0.f;
      sq += v[c] * v[c];
    }
    float rms = sqrtf(sq / C + eps);
#pragma unroll
    for (int c = 0; c < IN_REGS; ++c)
      if (c < C) q[c * S] = v[c] / rms;
  } else {
    for (int c = 0; c < C; ++c) { float v = p[c * S]; sq += v * v; }
    float rms = sqrtf(sq / C + eps);
    for (int c = 0; c < C; ++c) q[c * S] = p[c * S] / rms;
  }
}

torch::Tensor rms_norm(torch::Tensor x, double eps) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() >= 2 &&
              x.scalar_type() == torch::kFloat32,
              "rms_norm: x must be a contiguous float32 CUDA tensor of 2 or more dimensions");
  auto y = torch::empty_like(x);
  int64_t B = x.size(0), C = x.size(1);
  if (x.numel() == 0) return y;
  TORCH_CHECK(C <= INT32_MAX, "rms_norm: too many features");
  int64_t S = x.numel() / (B * C), total = B * S;
  const int threads = 256;
  int64_t blocks = (total + threads - 1) / threads;
  TORCH_CHECK(blocks <= INT32_MAX, "rms_norm: too many positions for one grid");
  auto stream = at::cuda::getCurrentCUDAStream();
  if (C <= IN_REGS)
    rms_norm_kernel<true><<<(unsigned)blocks, threads, 0, stream>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), (int)C, S, total, (float)eps);
  else
    rms_norm_kernel<false><<<(unsigned)blocks, threads, 0, stream>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), (int)C, S, total, (float)eps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""

_ext = load_inline(
    name="cudaopt_tp_rms_norm_cuda",
    cpp_sources="torch::Tensor rms_norm(torch::Tensor x, double eps);",
    cuda_sources=_CUDA_SRC,
    functions=["rms_norm"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


@torch.library.custom_op("cudaopt::tp_rms_norm_cuda", mutates_args=())
def rms_norm(x: torch.Tensor, eps: float) -> torch.Tensor:
    return _ext.rms_norm(x, eps)


rms_norm.register_fake(lambda x, eps: torch.empty_like(x))


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.eps)
