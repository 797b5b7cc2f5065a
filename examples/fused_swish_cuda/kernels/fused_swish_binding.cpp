#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include "cudaopt_binding.h"

extern "C" cudaError_t fused_swish_launch(const float* x, const float* bias, float* y,
                                          int64_t rows, int64_t cols, float scale,
                                          cudaStream_t stream);

static torch::Tensor fused_swish(torch::Tensor x, torch::Tensor bias, double scale) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(), "x: contiguous 2-D CUDA tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat && x.size(1) % 4 == 0, "x: float, cols % 4 == 0");
  TORCH_CHECK(bias.numel() == x.size(1), "bias must have one value per column");
  auto y = torch::empty_like(x);
  cudaError_t err = fused_swish_launch(x.data_ptr<float>(), bias.data_ptr<float>(),
                                       y.data_ptr<float>(), x.size(0), x.size(1),
                                       static_cast<float>(scale),
                                       c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(err == cudaSuccess, "fused_swish launch failed: ", cudaGetErrorString(err));
  return y;
}

CUDAOPT_BIND(m) { m.def("fused_swish", &fused_swish, "fused swish + scale + bias + clamp"); }
