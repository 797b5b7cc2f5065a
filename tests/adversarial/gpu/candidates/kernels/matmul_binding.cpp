#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include "cudaopt_binding.h"

extern "C" cudaError_t tiled_matmul_launch(const float*, const float*, float*, int, int, int,
                                           cudaStream_t);
extern "C" int cublas_matmul_launch(const float*, const float*, float*, int, int, int,
                                    cudaStream_t);

static void check_inputs(const torch::Tensor& a, const torch::Tensor& b) {
  TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.dim() == 2 && b.dim() == 2, "2-D CUDA tensors");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && a.size(1) == b.size(0), "a @ b shapes");
  TORCH_CHECK(a.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat, "float32");
}

static torch::Tensor launch_on(torch::Tensor a, torch::Tensor b, cudaStream_t stream) {
  check_inputs(a, b);
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  cudaError_t err = tiled_matmul_launch(a.data_ptr<float>(), b.data_ptr<float>(),
                                        c.data_ptr<float>(), a.size(0), b.size(1), a.size(1),
                                        stream);
  TORCH_CHECK(err == cudaSuccess, "tiled_matmul: ", cudaGetErrorString(err));
  return c;
}

// Honest: on the current stream (inside `with torch.cuda.stream(s)`, that is s).
static torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
  return launch_on(a, b, c10::cuda::getCurrentCUDAStream().stream());
}

// Hack: on a private stream that nobody waits for.
static torch::Tensor matmul_side_stream(torch::Tensor a, torch::Tensor b) {
  static cudaStream_t side = [] {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  return launch_on(a, b, side);
}

// Hack: allocates the output and never writes it.
static torch::Tensor matmul_unwritten(torch::Tensor a, torch::Tensor b) {
  check_inputs(a, b);
  return torch::empty({a.size(0), b.size(1)}, a.options());
}

// Honest: cuBLAS through its C API, on the current stream.
static torch::Tensor matmul_cublas(torch::Tensor a, torch::Tensor b) {
  check_inputs(a, b);
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  int status = cublas_matmul_launch(a.data_ptr<float>(), b.data_ptr<float>(),
                                    c.data_ptr<float>(), a.size(0), b.size(1), a.size(1),
                                    c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(status == 0, "cublasSgemm failed with status ", status);
  return c;
}

CUDAOPT_BIND(m) {
  m.def("matmul", &matmul);
  m.def("matmul_side_stream", &matmul_side_stream);
  m.def("matmul_unwritten", &matmul_unwritten);
  m.def("matmul_cublas", &matmul_cublas);
}
