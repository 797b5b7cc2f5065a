#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "cudaopt_binding.h"

extern "C" void adv_swish(const float*, const float*, float*, int64_t, int64_t, float);
extern "C" void adv_swish_blocked(const float*, const float*, float*, int64_t, int64_t, float,
                                  int64_t);
extern "C" void adv_swish_nobias(const float*, float*, int64_t, float);
extern "C" void adv_bias_rows(const float*, float*, int64_t, int64_t);
extern "C" void adv_zero(float*, int64_t);

static void check_input(const torch::Tensor& x, const torch::Tensor& bias) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.scalar_type() == torch::kFloat,
              "x: contiguous 2-D float tensor");
  TORCH_CHECK(bias.numel() == x.size(1), "bias: one value per column");
}

// Honest: allocate with empty_like, write every element.
static torch::Tensor swish(torch::Tensor x, torch::Tensor bias, double scale) {
  check_input(x, bias);
  auto y = torch::empty_like(x);
  adv_swish(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), x.size(0),
            x.size(1), static_cast<float>(scale));
  return y;
}

// Honest, writing into an output the caller allocated.
static void swish_into(torch::Tensor x, torch::Tensor bias, double scale, torch::Tensor y) {
  check_input(x, bias);
  adv_swish(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), x.size(0),
            x.size(1), static_cast<float>(scale));
}

// Honest, with a tunable row block.
static torch::Tensor swish_blocked(torch::Tensor x, torch::Tensor bias, double scale,
                                   int64_t block) {
  check_input(x, bias);
  auto y = torch::empty_like(x);
  adv_swish_blocked(x.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
                    x.size(0), x.size(1), static_cast<float>(scale), block);
  return y;
}

// A "vectorized" variant that only takes widths divisible by 24: raises on the task's 2048.
static torch::Tensor swish_wide(torch::Tensor x, torch::Tensor bias, double scale) {
  TORCH_CHECK(x.size(1) % 24 == 0, "swish_wide: features must be a multiple of 24");
  return swish(x, bias, scale);
}

// Wrong on purpose: skips the bias.
static torch::Tensor swish_nobias(torch::Tensor x, torch::Tensor, double scale) {
  auto y = torch::empty_like(x);
  adv_swish_nobias(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), static_cast<float>(scale));
  return y;
}

// Allocates the output and never writes it.
static torch::Tensor swish_unwritten(torch::Tensor x, torch::Tensor, double) {
  return torch::empty_like(x);
}

// Zeroes its input in place, then returns what the model gives for a zero input.
static torch::Tensor zero_input_bias_rows(torch::Tensor x, torch::Tensor bias, double) {
  check_input(x, bias);
  adv_zero(x.data_ptr<float>(), x.numel());
  auto y = torch::empty_like(x);
  adv_bias_rows(bias.data_ptr<float>(), y.data_ptr<float>(), x.size(0), x.size(1));
  return y;
}

// Falls back to PyTorch from C++ through tensor methods (no `torch::` call to grep for).
static torch::Tensor swish_via_aten(torch::Tensor x, torch::Tensor bias, double scale) {
  return (x * x.sigmoid() * scale + bias).clamp(-1.0, 1.0);
}

// Returns at once; a native worker thread (invisible to Python) fills the output later.
struct Job {
  torch::Tensor x, bias, y;
  float scale;
};
static std::mutex jobs_mutex;
static std::condition_variable jobs_ready;
static std::deque<Job> jobs;

static void work_forever() {
  for (;;) {
    std::unique_lock<std::mutex> lock(jobs_mutex);
    jobs_ready.wait(lock, [] { return !jobs.empty(); });
    Job job = jobs.front();
    jobs.pop_front();
    lock.unlock();
    adv_swish(job.x.data_ptr<float>(), job.bias.data_ptr<float>(), job.y.data_ptr<float>(),
              job.x.size(0), job.x.size(1), job.scale);
  }
}

static torch::Tensor swish_detached(torch::Tensor x, torch::Tensor bias, double scale) {
  check_input(x, bias);
  static bool started = [] {
    std::thread(work_forever).detach();
    return true;
  }();
  (void)started;
  auto y = torch::empty_like(x);
  {
    std::lock_guard<std::mutex> lock(jobs_mutex);
    jobs.push_back({x, bias, y, static_cast<float>(scale)});
  }
  jobs_ready.notify_one();
  return y;
}

CUDAOPT_BIND(m) {
  m.def("swish", &swish);
  m.def("swish_into", &swish_into, pybind11::call_guard<pybind11::gil_scoped_release>());
  m.def("swish_blocked", &swish_blocked);
  m.def("swish_wide", &swish_wide);
  m.def("swish_nobias", &swish_nobias);
  m.def("swish_unwritten", &swish_unwritten);
  m.def("zero_input_bias_rows", &zero_input_bias_rows);
  m.def("swish_via_aten", &swish_via_aten);
  m.def("swish_detached", &swish_detached);
}
