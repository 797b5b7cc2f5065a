// A syntax error, caught before any header is read.
extern "C" void swish(const float* x, float* y, long n) {
  for (long i = 0; i < n; ++i) y[i] = x[i] /* missing semicolon */
}
