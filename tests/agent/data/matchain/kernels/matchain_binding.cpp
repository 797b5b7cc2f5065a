#include "cudaopt_binding.h"

extern "C" void matchain_cpu(const float* a, const float* b, const float* v, float* tmp,
                             float* y, int64_t n, int64_t k);

static torch::Tensor matchain(torch::Tensor a, torch::Tensor b, torch::Tensor v) {
  for (const auto& t : {a, b, v}) {
    TORCH_CHECK(t.device().is_cpu() && t.is_contiguous() && t.scalar_type() == torch::kFloat,
                "inputs must be contiguous float32 CPU tensors");
  }
  const int64_t n = a.size(0), k = v.size(1);
  auto tmp = torch::empty({n, k}, v.options());
  auto y = torch::empty({n, k}, v.options());
  matchain_cpu(a.data_ptr<float>(), b.data_ptr<float>(), v.data_ptr<float>(),
               tmp.data_ptr<float>(), y.data_ptr<float>(), n, k);
  return y;
}

CUDAOPT_BIND(m) { m.def("matchain", &matchain, "A @ (B @ V)"); }
