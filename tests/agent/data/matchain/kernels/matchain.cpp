// Y = A @ (B @ V): two (n x n) @ (n x k) products instead of one (n x n) @ (n x n).
#include <cstdint>

static void mm_nk(const float* __restrict__ m, const float* __restrict__ x,
                  float* __restrict__ out, int64_t n, int64_t k) {
  for (int64_t i = 0; i < n; ++i) {
    float* o = out + i * k;
    for (int64_t j = 0; j < k; ++j) o[j] = 0.f;
    for (int64_t p = 0; p < n; ++p) {
      const float w = m[i * n + p];
      const float* xp = x + p * k;
      for (int64_t j = 0; j < k; ++j) o[j] += w * xp[j];
    }
  }
}

extern "C" void matchain_cpu(const float* a, const float* b, const float* v, float* tmp,
                             float* y, int64_t n, int64_t k) {
  mm_nk(b, v, tmp, n, k);
  mm_nk(a, tmp, y, n, k);
}
