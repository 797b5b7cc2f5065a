// Fixed entry point of the kernels/ extension module: runs every CUDAOPT_BIND block.
#include "cudaopt_binding.h"

PYBIND11_MODULE(cuda_extension, m) {
  for (auto fn : cudaopt::bindings()) fn(m);
}
