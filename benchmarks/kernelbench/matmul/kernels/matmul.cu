// Shared-memory tiled SGEMM: 64x64 tile per block, 4x4 outputs per thread, fp32 accumulate.
#include <cuda_runtime.h>
#include <cstdint>

constexpr int TILE = 64, STEP = 16, PER = 4;

__global__ void matmul_kernel(const float* __restrict__ a, const float* __restrict__ b,
                              float* __restrict__ c, int n) {
  __shared__ float as[STEP][TILE + 1];
  __shared__ float bs[STEP][TILE];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
  float acc[PER][PER] = {};
  for (int k0 = 0; k0 < n; k0 += STEP) {
    for (int i = threadIdx.x; i < TILE * STEP; i += blockDim.x) {
      int r = i / STEP, k = i % STEP;
      as[k][r] = a[(int64_t)(row0 + r) * n + k0 + k];
      int kb = i / TILE, cb = i % TILE;
      bs[kb][cb] = b[(int64_t)(k0 + kb) * n + col0 + cb];
    }
    __syncthreads();
    for (int k = 0; k < STEP; ++k) {
      float av[PER], bv[PER];
      for (int p = 0; p < PER; ++p) av[p] = as[k][ty * PER + p];
      for (int p = 0; p < PER; ++p) bv[p] = bs[k][tx * PER + p];
      for (int i = 0; i < PER; ++i)
        for (int j = 0; j < PER; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < PER; ++i)
    for (int j = 0; j < PER; ++j)
      c[(int64_t)(row0 + ty * PER + i) * n + col0 + tx * PER + j] = acc[i][j];
}

extern "C" cudaError_t matmul_launch(const float* a, const float* b, float* c, int n,
                                     cudaStream_t stream) {
  dim3 grid(n / TILE, n / TILE);
  matmul_kernel<<<grid, 256, 0, stream>>>(a, b, c, n);
  return cudaGetLastError();
}
