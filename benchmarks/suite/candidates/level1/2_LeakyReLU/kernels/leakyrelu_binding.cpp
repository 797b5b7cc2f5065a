#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include "cudaopt_binding.h"

extern "C" cudaError_t leakyrelu_launch(const float* x, float* y, int64_t n, cudaStream_t stream);

static torch::Tensor leakyrelu_forward(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat,
              "x: contiguous float CUDA tensor");
  TORCH_CHECK(x.numel() % 4 == 0, "x: a multiple of four elements");
  auto y = torch::empty_like(x);
  cudaError_t err = leakyrelu_launch(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(),
                                c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(err == cudaSuccess, "leakyrelu launch failed: ", cudaGetErrorString(err));
  return y;
}

CUDAOPT_BIND(m) { m.def("leakyrelu", &leakyrelu_forward); }
