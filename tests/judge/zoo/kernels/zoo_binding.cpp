#include "cudaopt_binding.h"

extern "C" void zoo_swish(const float*, const float*, float*, int64_t, int64_t, float);
extern "C" void zoo_swish_nobias(const float*, float*, int64_t, float);
extern "C" void zoo_segfault();
extern "C" void zoo_hang();

static torch::Tensor swish(torch::Tensor x, torch::Tensor bias, double scale) {
  auto y = torch::empty_like(x);
  zoo_swish(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), x.size(0),
            x.size(1), static_cast<float>(scale));
  return y;
}

static torch::Tensor swish_nobias(torch::Tensor x, torch::Tensor bias, double scale) {
  auto y = torch::empty_like(x);
  zoo_swish_nobias(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), static_cast<float>(scale));
  return y;
}

// Drops the last column: wrong shape.
static torch::Tensor swish_narrow(torch::Tensor x, torch::Tensor bias, double scale) {
  auto y = torch::empty({x.size(0), x.size(1) - 1}, x.options());
  auto full = swish(x, bias, scale);
  std::copy(full.data_ptr<float>(), full.data_ptr<float>() + y.numel(), y.data_ptr<float>());
  return y;
}

// Allocates the output and never writes it.
static torch::Tensor swish_unwritten(torch::Tensor x, torch::Tensor, double) {
  return torch::empty_like(x);
}

// Falls back to PyTorch from C++: the guard must see these dispatcher calls.
static torch::Tensor swish_torch(torch::Tensor x, torch::Tensor bias, double scale) {
  return torch::clamp(x * torch::sigmoid(x) * scale + bias, -1.0, 1.0);
}

static torch::Tensor segfault(torch::Tensor x, torch::Tensor, double) {
  zoo_segfault();
  return x;
}

static torch::Tensor hang(torch::Tensor x, torch::Tensor, double) {
  zoo_hang();
  return x;
}

CUDAOPT_BIND(m) {
  m.def("swish", &swish);
  m.def("swish_nobias", &swish_nobias);
  m.def("swish_narrow", &swish_narrow);
  m.def("swish_unwritten", &swish_unwritten);
  m.def("swish_torch", &swish_torch);
  m.def("segfault", &segfault);
  m.def("hang", &hang);
}
