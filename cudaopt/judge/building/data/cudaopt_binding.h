// cudaopt's binding header for CUDA-Agent-style kernels (kernels/*_binding.cpp).
//
// Every binding file registers its functions into the one extension module the judge
// builds from kernels/, named `cuda_extension`:
//
//     #include "cudaopt_binding.h"
//     torch::Tensor my_op(torch::Tensor x) { ... }
//     CUDAOPT_BIND(m) { m.def("my_op", &my_op); }
//
// torch/types.h and the pybind header compile much faster than torch/extension.h.
// A guard, not `#pragma once`: the judge may give a precompiled copy of this file ahead of
// the source (see cudaopt/judge/building/pch.py), and the source's own #include must then
// find it already read.
#ifndef CUDAOPT_BINDING_H_
#define CUDAOPT_BINDING_H_
#include <torch/types.h>
#include <torch/csrc/utils/pybind.h>

#include <functional>
#include <vector>

namespace cudaopt {
using BindFn = void (*)(pybind11::module_&);
inline std::vector<BindFn>& bindings() {
  static std::vector<BindFn> fns;
  return fns;
}
struct Registrar {
  explicit Registrar(BindFn fn) { bindings().push_back(fn); }
};
}  // namespace cudaopt

#define CUDAOPT_CAT_(a, b) a##b
#define CUDAOPT_CAT(a, b) CUDAOPT_CAT_(a, b)
#define CUDAOPT_BIND(m)                                                              \
  static void CUDAOPT_CAT(cudaopt_bind_, __LINE__)(pybind11::module_ & m);          \
  static ::cudaopt::Registrar CUDAOPT_CAT(cudaopt_registrar_, __LINE__)(            \
      &CUDAOPT_CAT(cudaopt_bind_, __LINE__));                                        \
  static void CUDAOPT_CAT(cudaopt_bind_, __LINE__)(pybind11::module_ & m)

#endif  // CUDAOPT_BINDING_H_
