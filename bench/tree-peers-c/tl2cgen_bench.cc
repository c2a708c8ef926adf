// Bench-only helper (never built by npm install, never a runtime dependency): times a TL2cgen-compiled
// model (Treelite 4 -> TL2cgen 1.0 generated C, built into a shared library by
// python/bench_trees_peers.py make) called directly from C, on the same rows the TypeScript bench
// uses, and prints JSON in the shape of bench/xgboost-c/predict_bench.cc.
//
// The generated library exports `void predict(union Entry* data, int pred_margin, double* result)`,
// one row per call, with `union Entry { int missing; double fvalue; int qvalue; }` (missing = -1).
// predict() adds each tree's leaf into *result, so the caller zeroes it first. A batch call converts
// each float32 row into that Entry array (NaN -> missing) and calls predict once per row, which is
// what TL2cgen's own Predictor does, minus its thread pool.
//
//   tl2cgen_bench LIB.so ROWS.f32 NUM_FEATURES SIZES SECONDS
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

union Entry {
  int missing;
  double fvalue;
  int qvalue;
};
typedef void (*PredictFn)(union Entry* data, int pred_margin, double* result);
typedef int32_t (*NumTargetFn)(void);

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s LIB.so ROWS.f32 NUM_FEATURES SIZES SECONDS\n", argv[0]);
    return 1;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  PredictFn predictRow = reinterpret_cast<PredictFn>(dlsym(lib, "predict"));
  NumTargetFn numTarget = reinterpret_cast<NumTargetFn>(dlsym(lib, "get_num_target"));
  if (!predictRow || !numTarget || numTarget() != 1) {
    std::fprintf(stderr, "%s: not a single-target TL2cgen library\n", argv[1]);
    return 2;
  }
  const size_t nf = std::strtoul(argv[3], nullptr, 10);
  std::vector<size_t> sizes;
  {
    std::stringstream ss(argv[4]);
    std::string item;
    while (std::getline(ss, item, ',')) sizes.push_back(std::strtoul(item.c_str(), nullptr, 10));
  }
  const double seconds = std::atof(argv[5]);

  std::ifstream in(argv[2], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> rows(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + rows.size() * sizeof(float), reinterpret_cast<char*>(rows.data()));
  const size_t available = rows.size() / nf;

  std::vector<Entry> entry(nf);
  std::vector<double> out(available);
  auto predict = [&](size_t n, int margin) {
    for (size_t r = 0; r < n; ++r) {
      const float* x = &rows[r * nf];
      for (size_t f = 0; f < nf; ++f) {
        if (std::isnan(x[f])) {
          entry[f].missing = -1;
        } else {
          entry[f].fvalue = x[f];
        }
      }
      out[r] = 0.0;  // predict() adds every tree's leaf into *result
      predictRow(entry.data(), margin, &out[r]);
    }
  };

  std::printf("{\"predictor\": \"tl2cgen predict()\", \"nthread\": 1, \"results\": [");
  for (size_t si = 0; si < sizes.size(); ++si) {
    const size_t n = sizes[si];
    if (n > available) {
      std::fprintf(stderr, "need %zu rows, file has %zu\n", n, available);
      return 1;
    }
    predict(n, 1);
    std::vector<double> margins(out.begin(), out.begin() + n);
    predict(n, 0);
    std::vector<double> values(out.begin(), out.begin() + n);

    std::vector<double> us;
    const auto start = std::chrono::steady_clock::now();
    for (int warm = 0; warm < 20; ++warm) predict(n, 0);
    while (true) {
      const auto t0 = std::chrono::steady_clock::now();
      predict(n, 0);
      const auto t1 = std::chrono::steady_clock::now();
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (us.size() >= 50 && std::chrono::duration<double>(t1 - start).count() > seconds) break;
    }
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2];
    const double p99 = us[std::min(us.size() - 1, static_cast<size_t>(us.size() * 0.99))];
    std::printf("%s{\"rows\": %zu, \"calls\": %zu, \"medianUs\": %.3f, \"p99Us\": %.3f, \"margin\": [", si ? ", " : "", n,
                us.size(), median, p99);
    for (size_t i = 0; i < margins.size(); ++i) std::printf("%s%.17g", i ? "," : "", margins[i]);
    std::printf("], \"value\": [");
    for (size_t i = 0; i < values.size(); ++i) std::printf("%s%.17g", i ? "," : "", values[i]);
    std::printf("]}");
  }
  std::printf("]}\n");
  dlclose(lib);
  return 0;
}
