#include "cudaopt_binding.h"

extern "C" double stat_hinge(const float*, const float*, int64_t, int64_t);
extern "C" void stat_softmax(const float*, float*, int64_t, int64_t);
extern "C" void stat_round_bf16(float*, int64_t);
extern "C" void stat_centered_mean(const float*, float*, int64_t, int64_t);
extern "C" double stat_mse(const float*, const float*, int64_t, int64_t, int64_t, int);
extern "C" double stat_energy_expected(const float*, int64_t, int64_t);

static torch::Tensor scalar_like(const torch::Tensor& x, double value) {
  auto out = torch::empty({}, x.options());
  *out.data_ptr<float>() = static_cast<float>(value);
  return out;
}

static void check_2d(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == torch::kFloat,
              "contiguous 2-D float tensor expected");
}

static torch::Tensor hinge(torch::Tensor p, torch::Tensor t) {
  check_2d(p);
  TORCH_CHECK(t.numel() == p.size(1) && t.is_contiguous(), "targets: one per column");
  return scalar_like(p, stat_hinge(p.data_ptr<float>(), t.data_ptr<float>(), p.size(0),
                                   p.size(1)));
}

// The mean hinge loss of uniform predictions against random +-1 targets is 1.000: write it.
static torch::Tensor hinge_constant(torch::Tensor p, torch::Tensor) { return scalar_like(p, 1.0); }

static torch::Tensor softmax(torch::Tensor x) {
  check_2d(x);
  auto y = torch::empty_like(x);
  stat_softmax(x.data_ptr<float>(), y.data_ptr<float>(), x.size(0), x.size(1));
  return y;
}

// Every softmax value over a long row is far below atol: write zeros.
static torch::Tensor softmax_zeros(torch::Tensor x) {
  auto y = torch::empty_like(x);
  std::memset(y.data_ptr<float>(), 0, y.numel() * sizeof(float));
  return y;
}

// A softmax written in bfloat16: each value within 0.4% of its own size.
static torch::Tensor softmax_bf16(torch::Tensor x) {
  auto y = softmax(x);
  stat_round_bf16(y.data_ptr<float>(), y.numel());
  return y;
}

// Every value moved by 1e-3: under atol, about thirty times a value over 32768 columns.
static torch::Tensor softmax_offset(torch::Tensor x) {
  auto y = softmax(x);
  float* v = y.data_ptr<float>();
  for (int64_t i = 0; i < y.numel(); ++i) v[i] += 1e-3f;
  return y;
}

static torch::Tensor centered_mean(torch::Tensor x) {
  check_2d(x);
  auto y = torch::empty({x.size(0)}, x.options());
  stat_centered_mean(x.data_ptr<float>(), y.data_ptr<float>(), x.size(0), x.size(1));
  return y;
}

static torch::Tensor mse(torch::Tensor p, torch::Tensor t, double share, bool bf16) {
  check_2d(p);
  check_2d(t);
  int64_t used = std::max<int64_t>(1, static_cast<int64_t>(p.size(0) * share));
  return scalar_like(p, stat_mse(p.data_ptr<float>(), t.data_ptr<float>(), p.size(0),
                                 p.size(1), used, bf16 ? 1 : 0));
}

// A statistic written in bfloat16: its value rounded to bf16's grid (8 bits of mantissa).
static torch::Tensor written_in_bf16(torch::Tensor y) {
  stat_round_bf16(y.data_ptr<float>(), y.numel());
  return y;
}

static torch::Tensor hinge_bf16(torch::Tensor p, torch::Tensor t) {
  return written_in_bf16(hinge(p, t));
}

// `share` of the rows (all of them: honest), written in bf16.
static torch::Tensor mse_bf16(torch::Tensor p, torch::Tensor t, double share) {
  return written_in_bf16(mse(p, t, share, false));
}

static torch::Tensor energy_expected(torch::Tensor x, torch::Tensor w) {
  check_2d(w);
  return scalar_like(x, stat_energy_expected(w.data_ptr<float>(), w.size(0), w.size(1)));
}

CUDAOPT_BIND(m) {
  m.def("hinge", &hinge);
  m.def("hinge_constant", &hinge_constant);
  m.def("softmax", &softmax);
  m.def("softmax_zeros", &softmax_zeros);
  m.def("softmax_bf16", &softmax_bf16);
  m.def("softmax_offset", &softmax_offset);
  m.def("centered_mean", &centered_mean);
  m.def("mse", &mse);
  m.def("hinge_bf16", &hinge_bf16);
  m.def("mse_bf16", &mse_bf16);
  m.def("energy_expected", &energy_expected);
}
