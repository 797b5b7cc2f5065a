// y = x / sqrt(mean(x^2) + eps) * w, row by row over the last dimension.
#include <cmath>
#include <cstdint>

extern "C" void rms_norm_launch(const float* x, const float* w, float* y, int64_t rows,
                                int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) sum += xr[c] * xr[c];
    const float inv = 1.0f / std::sqrt(sum / static_cast<float>(cols) + eps);
    for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * inv * w[c];
  }
}
