"""A KernelBench-style CPU candidate for tests/judge/zoo/task.py: its own C++ kernel built
with load_inline under a name any other candidate might choose too. CLAMP is rewritten by
the tests to make a second, wrong candidate with the very same extension name."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CLAMP = 1.0

source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor swish_scale_bias(torch::Tensor x, torch::Tensor bias, double scale,
                               double clamp) {
  auto y = torch::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* bp = bias.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  int64_t cols = x.size(1);
  for (int64_t i = 0; i < x.numel(); ++i) {
    float v = xp[i];
    float s = v / (1.0f + std::exp(-v)) * (float)scale + bp[i % cols];
    yp[i] = std::fmin(std::fmax(s, (float)-clamp), (float)clamp);
  }
  return y;
}
"""

ext = load_inline(name="fused_kernel", cpp_sources=source, functions=["swish_scale_bias"],
                  extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.swish_scale_bias(x.contiguous(), self.bias, self.scale, CLAMP)
