// Bench-only helper (never built by npm install, never a runtime dependency): times LightGBM's own C
// API on the same rows the TypeScript bench uses, one thread, and prints JSON in the shape of
// bench/xgboost-c/predict_bench.cc (per-call timings plus the predictions, for the parity check).
// Links the PyPI wheel's lib_lightgbm.so; the few prototypes it needs are declared below (LightGBM
// 4.x c_api.h; the wheel ships no headers). Build: bench/tree-peers-c/build.sh.
//
//   lightgbm_bench MODEL.txt ROWS.f32 NUM_FEATURES SIZES SECONDS [--single-row-fast]
//     default: LGBM_BoosterPredictForMat (float32, row-major, one call per batch)
//     --single-row-fast: LGBM_BoosterPredictForMatSingleRowFast, one call per row of the batch
//       (LightGBM's low-latency path: the config is parsed once, in ...FastInit)
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

extern "C" {
typedef void* BoosterHandle;
typedef void* FastConfigHandle;
int LGBM_BoosterCreateFromModelfile(const char* filename, int* out_num_iterations, BoosterHandle* out);
int LGBM_BoosterPredictForMat(BoosterHandle handle, const void* data, int data_type, int32_t nrow, int32_t ncol,
                              int is_row_major, int predict_type, int start_iteration, int num_iteration,
                              const char* parameter, int64_t* out_len, double* out_result);
int LGBM_BoosterPredictForMatSingleRowFastInit(BoosterHandle handle, const int predict_type, const int start_iteration,
                                               const int num_iteration, const int data_type, const int32_t ncol,
                                               const char* parameter, FastConfigHandle* out_fastConfig);
int LGBM_BoosterPredictForMatSingleRowFast(FastConfigHandle fastConfig_handle, const void* data, int64_t* out_len,
                                           double* out_result);
int LGBM_FastConfigFree(FastConfigHandle fastConfig);
int LGBM_BoosterFree(BoosterHandle handle);
const char* LGBM_GetLastError();
}

// c_api.h constants
static const int kFloat32 = 0;     // C_API_DTYPE_FLOAT32
static const int kPredictNormal = 0;  // C_API_PREDICT_NORMAL
static const int kPredictRaw = 1;     // C_API_PREDICT_RAW_SCORE

#define CHECK_LGBM(call)                                                  \
  do {                                                                    \
    if ((call) != 0) {                                                    \
      std::fprintf(stderr, "%s failed: %s\n", #call, LGBM_GetLastError()); \
      std::exit(2);                                                       \
    }                                                                     \
  } while (0)

static const char* kParams = "num_threads=1";

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s MODEL ROWS.f32 NUM_FEATURES SIZES SECONDS [--single-row-fast]\n", argv[0]);
    return 1;
  }
  const int nf = std::atoi(argv[3]);
  std::vector<size_t> sizes;
  {
    std::stringstream ss(argv[4]);
    std::string item;
    while (std::getline(ss, item, ',')) sizes.push_back(std::strtoul(item.c_str(), nullptr, 10));
  }
  const double seconds = std::atof(argv[5]);
  const bool fast = argc >= 7 && std::string(argv[6]) == "--single-row-fast";

  std::ifstream in(argv[2], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> rows(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + rows.size() * sizeof(float), reinterpret_cast<char*>(rows.data()));
  const size_t available = rows.size() / nf;

  BoosterHandle booster;
  int iterations = 0;
  CHECK_LGBM(LGBM_BoosterCreateFromModelfile(argv[1], &iterations, &booster));
  FastConfigHandle fastValue = nullptr, fastMargin = nullptr;
  if (fast) {
    CHECK_LGBM(LGBM_BoosterPredictForMatSingleRowFastInit(booster, kPredictNormal, 0, -1, kFloat32, nf, kParams,
                                                          &fastValue));
    CHECK_LGBM(
        LGBM_BoosterPredictForMatSingleRowFastInit(booster, kPredictRaw, 0, -1, kFloat32, nf, kParams, &fastMargin));
  }
  // One output per row (binary / regression / ranking models).
  std::vector<double> out(available);
  auto predict = [&](size_t n, int type) {
    int64_t len = 0;
    if (fast) {
      FastConfigHandle cfg = type == kPredictRaw ? fastMargin : fastValue;
      for (size_t r = 0; r < n; ++r) CHECK_LGBM(LGBM_BoosterPredictForMatSingleRowFast(cfg, &rows[r * nf], &len, &out[r]));
    } else {
      CHECK_LGBM(LGBM_BoosterPredictForMat(booster, rows.data(), kFloat32, static_cast<int32_t>(n), nf, 1, type, 0, -1,
                                           kParams, &len, out.data()));
    }
  };

  std::printf("{\"predictor\": \"%s\", \"nthread\": 1, \"results\": [",
              fast ? "LGBM_BoosterPredictForMatSingleRowFast" : "LGBM_BoosterPredictForMat");
  for (size_t si = 0; si < sizes.size(); ++si) {
    const size_t n = sizes[si];
    if (n > available) {
      std::fprintf(stderr, "need %zu rows, file has %zu\n", n, available);
      return 1;
    }
    predict(n, kPredictRaw);
    std::vector<double> margins(out.begin(), out.begin() + n);
    predict(n, kPredictNormal);
    std::vector<double> values(out.begin(), out.begin() + n);

    std::vector<double> us;
    const auto start = std::chrono::steady_clock::now();
    for (int warm = 0; warm < 20; ++warm) predict(n, kPredictNormal);
    while (true) {
      const auto t0 = std::chrono::steady_clock::now();
      predict(n, kPredictNormal);
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
  if (fast) {
    LGBM_FastConfigFree(fastValue);
    LGBM_FastConfigFree(fastMargin);
  }
  CHECK_LGBM(LGBM_BoosterFree(booster));
  return 0;
}
