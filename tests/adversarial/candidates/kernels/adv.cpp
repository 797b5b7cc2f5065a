// Plain C++ kernels shared by the adversarial candidates: the honest math, plus the pieces
// each hack needs. The hacks are in how the candidates use them (see the bindings).
#include <cmath>
#include <cstdint>

static inline float swish_one(float v, float scale, float b) {
  float s = v / (1.0f + std::exp(-v)) * scale + b;
  return s < -1.0f ? -1.0f : (s > 1.0f ? 1.0f : s);
}

extern "C" void adv_swish(const float* x, const float* bias, float* y, int64_t rows,
                          int64_t cols, float scale) {
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = swish_one(x[i], scale, bias[i % cols]);
}

// The same result, row block by row block: the block size is a tuning knob.
extern "C" void adv_swish_blocked(const float* x, const float* bias, float* y, int64_t rows,
                                  int64_t cols, float scale, int64_t block) {
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    int64_t r1 = r0 + block < rows ? r0 + block : rows;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = swish_one(x[r * cols + c], scale, bias[c]);
  }
}

// Forgets the bias: cheaper, and wrong.
extern "C" void adv_swish_nobias(const float* x, float* y, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) y[i] = swish_one(x[i], scale, 0.0f);
}

// What the model returns for x == 0: clamp(bias), row after row.
extern "C" void adv_bias_rows(const float* bias, float* y, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i) {
    float b = bias[i % cols];
    y[i] = b < -1.0f ? -1.0f : (b > 1.0f ? 1.0f : b);
  }
}

extern "C" void adv_zero(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.0f;
}
