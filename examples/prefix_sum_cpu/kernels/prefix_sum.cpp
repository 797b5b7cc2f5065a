// Running sums along each row in one pass: O(n) per row instead of a product with an
// n x n triangular matrix, O(n^2).
#include <cstdint>

extern "C" void prefix_sum_cpu(const float* x, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    float sum = 0.f;
    for (int64_t j = 0; j < n; ++j) {
      sum += in[j];
      out[j] = sum;
    }
  }
}
