// Bench-only helper (never built by npm install, never a runtime dependency): times XGBoost's own
// C predictor, XGBoosterPredictFromDense (inplace prediction, nthread 1), on the same rows the
// TypeScript bench uses, and prints JSON with per-call timings and the predictions themselves
// (so the bench can check that every evaluator it compares gives the same numbers).
//
//   predict_bench MODEL ROWS.f32 NUM_FEATURES SIZES SECONDS [--save-legacy OUT.bin]
//     ROWS.f32: raw little-endian float32, row-major, at least max(SIZES) rows (NaN = missing)
//     SIZES:    comma-separated batch sizes, e.g. 1,20,1000; batch n = the first n rows
//     SECONDS:  time budget per batch size
#include <xgboost/c_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK_XGB(call)                                                     \
  do {                                                                      \
    if ((call) != 0) {                                                      \
      std::fprintf(stderr, "%s failed: %s\n", #call, XGBGetLastError());    \
      std::exit(2);                                                         \
    }                                                                       \
  } while (0)

static std::string ArrayInterface(const float* data, size_t rows, size_t cols) {
  std::ostringstream s;
  s << "{\"data\": [" << reinterpret_cast<uintptr_t>(data) << ", true], \"shape\": [" << rows << ", " << cols
    << "], \"typestr\": \"<f4\", \"version\": 3}";
  return s.str();
}

static std::string Config(int type) {
  // type 0: transformed prediction, 1: margin. Same fields the Python inplace_predict sends.
  std::ostringstream s;
  s << "{\"type\": " << type
    << ", \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, \"strict_shape\": false, "
       "\"missing\": NaN, \"cache_id\": 0}";
  return s.str();
}

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s MODEL ROWS.f32 NUM_FEATURES SIZES SECONDS [--save-legacy OUT]\n", argv[0]);
    return 1;
  }
  const std::string modelPath = argv[1];
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

  BoosterHandle booster;
  CHECK_XGB(XGBoosterCreate(nullptr, 0, &booster));
  CHECK_XGB(XGBoosterLoadModel(booster, modelPath.c_str()));
  CHECK_XGB(XGBoosterSetParam(booster, "nthread", "1"));
  if (argc >= 8 && std::string(argv[6]) == "--save-legacy") {
    CHECK_XGB(XGBoosterSaveModel(booster, argv[7]));
  }

  std::printf("{\"predictor\": \"XGBoosterPredictFromDense\", \"nthread\": 1, \"results\": [");
  for (size_t si = 0; si < sizes.size(); ++si) {
    const size_t n = sizes[si];
    if (n > available) {
      std::fprintf(stderr, "need %zu rows, file has %zu\n", n, available);
      return 1;
    }
    const std::string iface = ArrayInterface(rows.data(), n, nf);
    const std::string marginCfg = Config(1);
    const std::string valueCfg = Config(0);
    bst_ulong const* shape;
    bst_ulong dim;
    const float* result;
    // Outputs, captured once per size for the bench's correctness check.
    std::vector<float> margins, values;
    CHECK_XGB(XGBoosterPredictFromDense(booster, iface.c_str(), marginCfg.c_str(), nullptr, &shape, &dim, &result));
    size_t count = 1;
    for (bst_ulong d = 0; d < dim; ++d) count *= shape[d];
    margins.assign(result, result + count);
    CHECK_XGB(XGBoosterPredictFromDense(booster, iface.c_str(), valueCfg.c_str(), nullptr, &shape, &dim, &result));
    count = 1;
    for (bst_ulong d = 0; d < dim; ++d) count *= shape[d];
    values.assign(result, result + count);

    // Timed loop: 'value' output (what a caller of predict() gets), one call per sample.
    std::vector<double> us;
    const auto start = std::chrono::steady_clock::now();
    for (int warm = 0; warm < 20; ++warm) {
      CHECK_XGB(XGBoosterPredictFromDense(booster, iface.c_str(), valueCfg.c_str(), nullptr, &shape, &dim, &result));
    }
    while (true) {
      const auto t0 = std::chrono::steady_clock::now();
      CHECK_XGB(XGBoosterPredictFromDense(booster, iface.c_str(), valueCfg.c_str(), nullptr, &shape, &dim, &result));
      const auto t1 = std::chrono::steady_clock::now();
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      if (us.size() >= 50 && std::chrono::duration<double>(t1 - start).count() > seconds) break;
    }
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2];
    const double p99 = us[std::min(us.size() - 1, static_cast<size_t>(us.size() * 0.99))];
    std::printf("%s{\"rows\": %zu, \"calls\": %zu, \"medianUs\": %.3f, \"p99Us\": %.3f, \"margin\": [", si ? ", " : "", n,
                us.size(), median, p99);
    for (size_t i = 0; i < margins.size(); ++i) std::printf("%s%.9g", i ? "," : "", margins[i]);
    std::printf("], \"value\": [");
    for (size_t i = 0; i < values.size(); ++i) std::printf("%s%.9g", i ? "," : "", values[i]);
    std::printf("]}");
  }
  std::printf("]}\n");
  CHECK_XGB(XGBoosterFree(booster));
  return 0;
}
