#include "cudaopt_binding.h"

extern "C" void fused_swish_launch(const float* x, const float* bias, float* y, int64_t rows,
                                   int64_t cols, float scale);

static torch::Tensor fused_swish(torch::Tensor x, torch::Tensor bias, double scale) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == torch::kFloat,
              "x must be a contiguous 2-D float tensor");
  TORCH_CHECK(bias.numel() == x.size(1), "bias must have one value per column");
  auto y = torch::empty_like(x);
  fused_swish_launch(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
                     x.size(0), x.size(1), static_cast<float>(scale));
  return y;
}

CUDAOPT_BIND(m) { m.def("fused_swish", &fused_swish, "fused swish + scale + bias + clamp"); }
