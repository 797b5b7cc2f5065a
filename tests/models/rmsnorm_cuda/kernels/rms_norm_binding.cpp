#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include "cudaopt_binding.h"

extern "C" cudaError_t rms_norm_bf16_launch(const void* x, const void* w, void* y, int64_t rows,
                                            int64_t cols, float eps, cudaStream_t stream);

static torch::Tensor rms_norm_bf16(torch::Tensor x, torch::Tensor w, double eps) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kBFloat16,
              "x: contiguous bf16 CUDA tensor");
  TORCH_CHECK(w.scalar_type() == torch::kBFloat16 && w.numel() == x.size(-1),
              "w: one bf16 weight per feature");
  auto y = torch::empty_like(x);
  const int64_t cols = x.size(-1);
  cudaError_t err = rms_norm_bf16_launch(x.data_ptr(), w.data_ptr(), y.data_ptr(),
                                         x.numel() / cols, cols, static_cast<float>(eps),
                                         c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(err == cudaSuccess, "rms_norm launch failed: ", cudaGetErrorString(err));
  return y;
}

CUDAOPT_BIND(m) { m.def("rms_norm_bf16", &rms_norm_bf16, "bf16 RMSNorm over the last dim"); }
