// Kernels on streams other than the current one: the racy ways (forked from the current
// stream or not, never joined back) and the honest ones (joined back, or the legacy stream).
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime.h>

#include "cudaopt_binding.h"

extern "C" cudaError_t diag_scale_launch(const float*, const float*, float*, int, cudaStream_t);
extern "C" cudaError_t diag_scale_launch_default(const float*, const float*, float*, int);
extern "C" cudaError_t tiled_matmul_launch(const float*, const float*, float*, int, int, int,
                                           cudaStream_t);

static cudaStream_t private_stream() {
  static cudaStream_t side = [] {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  return side;
}

// The side stream waits for the current one (it sees the inputs), but never the reverse.
static cudaStream_t forked_stream() {
  static cudaEvent_t ready = [] {
    cudaEvent_t e;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    return e;
  }();
  cudaEventRecord(ready, c10::cuda::getCurrentCUDAStream().stream());
  cudaStreamWaitEvent(private_stream(), ready, 0);
  return private_stream();
}

static void join_back(cudaStream_t side) {
  static cudaEvent_t done = [] {
    cudaEvent_t e;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    return e;
  }();
  cudaEventRecord(done, side);
  cudaStreamWaitEvent(c10::cuda::getCurrentCUDAStream().stream(), done, 0);
}

static torch::Tensor diag_on(torch::Tensor a, torch::Tensor b, int how) {
  TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.dim() == 1 && b.dim() == 2, "diag(a) @ b");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && b.size(0) == a.size(0) &&
                  b.size(1) == a.size(0), "square b, contiguous");
  auto c = torch::empty_like(b);
  int n = (int)a.size(0);
  const float *ap = a.data_ptr<float>(), *bp = b.data_ptr<float>();
  float* cp = c.data_ptr<float>();
  cudaError_t err;
  if (how == 0) {
    err = diag_scale_launch(ap, bp, cp, n, c10::cuda::getCurrentCUDAStream().stream());
  } else if (how == 1) {
    err = diag_scale_launch_default(ap, bp, cp, n);
  } else if (how == 2) {
    err = diag_scale_launch(ap, bp, cp, n, forked_stream());
  } else if (how == 3) {
    err = diag_scale_launch(ap, bp, cp, n, private_stream());
  } else {
    cudaStream_t side = forked_stream();
    err = diag_scale_launch(ap, bp, cp, n, side);
    join_back(side);
  }
  TORCH_CHECK(err == cudaSuccess, "diag_scale: ", cudaGetErrorString(err));
  return c;
}

// Heavy and racy: the tiled matmul on a stream forked from the current one, never joined.
static torch::Tensor matmul_forked(torch::Tensor a, torch::Tensor b) {
  auto c = torch::empty({a.size(0), b.size(1)}, a.options());
  cudaError_t err = tiled_matmul_launch(a.data_ptr<float>(), b.data_ptr<float>(),
                                        c.data_ptr<float>(), a.size(0), b.size(1), a.size(1),
                                        forked_stream());
  TORCH_CHECK(err == cudaSuccess, "tiled_matmul: ", cudaGetErrorString(err));
  return c;
}

CUDAOPT_BIND(m) {
  m.def("diag_current", [](torch::Tensor a, torch::Tensor b) { return diag_on(a, b, 0); });
  m.def("diag_legacy", [](torch::Tensor a, torch::Tensor b) { return diag_on(a, b, 1); });
  m.def("diag_forked", [](torch::Tensor a, torch::Tensor b) { return diag_on(a, b, 2); });
  m.def("diag_private", [](torch::Tensor a, torch::Tensor b) { return diag_on(a, b, 3); });
  m.def("diag_joined", [](torch::Tensor a, torch::Tensor b) { return diag_on(a, b, 4); });
  m.def("matmul_forked", &matmul_forked);
}
