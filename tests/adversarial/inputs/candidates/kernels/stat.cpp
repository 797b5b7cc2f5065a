// Plain C++ reductions for the input-dependence candidates: honest ones, and the shortcuts
// that ignore their input (a constant, zeros, a sub-sample, an expected value) or are off
// by more than their output's size (an offset under atol).
#include <cmath>
#include <cstdint>
#include <cstring>

extern "C" double stat_hinge(const float* p, const float* t, int64_t rows, int64_t cols) {
  double sum = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double v = 1.0 - double(p[r * cols + c]) * double(t[c]);
      sum += v > 0.0 ? v : 0.0;
    }
  return sum / double(rows * cols);
}

extern "C" void stat_softmax(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    float top = xr[0];
    for (int64_t c = 1; c < cols; ++c) top = xr[c] > top ? xr[c] : top;
    double total = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - top);
      total += yr[c];
    }
    float inv = float(1.0 / total);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
  }
}

// Rounds to bfloat16 (nearest, ties to even) and back: what a bf16 kernel reads.
static inline float to_bf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&v, &bits, 4);
  return v;
}

// Rounds every value to bfloat16 in place: what a kernel writing bf16 outputs returns.
extern "C" void stat_round_bf16(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = to_bf16(y[i]);
}

// Each row's mean of its deviations from the row's mean, in double: zero up to rounding,
// which the task's float32 reference rounds otherwise.
extern "C" void stat_centered_mean(const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double mean = 0.0;
    for (int64_t c = 0; c < cols; ++c) mean += xr[c];
    mean /= double(cols);
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += double(xr[c]) - mean;
    y[r] = float(sum / double(cols));
  }
}

// Mean squared error over the first `rows_used` of `rows` rows (all of them: honest).
extern "C" double stat_mse(const float* p, const float* t, int64_t rows, int64_t cols,
                           int64_t rows_used, int bf16) {
  double sum = 0.0;
  for (int64_t r = 0; r < rows_used; ++r) {
    float row = 0.0f;  // a bf16 kernel accumulates each row in fp32
    double exact = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      float a = p[r * cols + c], b = t[r * cols + c];
      if (bf16) {
        float d = to_bf16(a) - to_bf16(b);
        row += d * d;
      } else {
        double d = double(a) - double(b);
        exact += d * d;
      }
    }
    sum += bf16 ? double(row) : exact;
  }
  return sum / double(rows_used * cols);
}

// The expected value of mean((x @ W^T)^2) for x of independent unit-variance entries:
// the sum of W's squares over its rows; it never reads x.
extern "C" double stat_energy_expected(const float* w, int64_t out_features, int64_t in_features) {
  double sum = 0.0;
  for (int64_t i = 0; i < out_features * in_features; ++i) sum += double(w[i]) * double(w[i]);
  return sum / double(out_features);
}
