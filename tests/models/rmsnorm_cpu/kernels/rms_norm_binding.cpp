#include "cudaopt_binding.h"

extern "C" void rms_norm_launch(const float* x, const float* w, float* y, int64_t rows,
                                int64_t cols, float eps);

static torch::Tensor rms_norm(torch::Tensor x, torch::Tensor w, double eps) {
  TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat, "x: contiguous float");
  TORCH_CHECK(w.numel() == x.size(-1), "one weight per feature");
  auto y = torch::empty_like(x);
  const int64_t cols = x.size(-1);
  rms_norm_launch(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(),
                  x.numel() / cols, cols, static_cast<float>(eps));
  return y;
}

CUDAOPT_BIND(m) { m.def("rms_norm", &rms_norm, "RMSNorm over the last dimension"); }
