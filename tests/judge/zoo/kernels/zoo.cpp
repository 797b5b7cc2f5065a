// Kernels for the judge's tests: one correct, the rest broken in one specific way each.
#include <cmath>
#include <cstdint>

static float swish_one(float v, float scale, float b) {
  float s = v / (1.0f + std::exp(-v)) * scale + b;
  return s < -1.0f ? -1.0f : (s > 1.0f ? 1.0f : s);
}

extern "C" void zoo_swish(const float* x, const float* bias, float* y, int64_t rows,
                          int64_t cols, float scale) {
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = swish_one(x[i], scale, bias[i % cols]);
}

// Forgets the bias: right shape, wrong values.
extern "C" void zoo_swish_nobias(const float* x, float* y, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) y[i] = swish_one(x[i], scale, 0.0f);
}

extern "C" void zoo_segfault() {
  volatile float* p = nullptr;
  *p = 1.0f;
}

extern "C" void zoo_hang() {
  volatile int64_t spin = 0;
  for (;;) spin = spin + 1;
}
