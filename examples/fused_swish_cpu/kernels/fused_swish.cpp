// One pass over x: y = clamp(x * sigmoid(x) * scale + bias[col], -1, 1).
#include <cmath>
#include <cstdint>

extern "C" void fused_swish_launch(const float* x, const float* bias, float* y, int64_t rows,
                                   int64_t cols, float scale) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      float v = xr[c];
      float s = v / (1.0f + std::exp(-v)) * scale + bias[c];
      yr[c] = s < -1.0f ? -1.0f : (s > 1.0f ? 1.0f : s);
    }
  }
}
