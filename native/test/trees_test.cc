// Standalone driver for the tree evaluator core (no Node, no N-API), built by
// scripts/native-sanitize.sh with -fsanitize=address,undefined. It evaluates the XGBoost parity
// fixtures (dumped by scripts/trees-dump-fixtures.ts) through the same Compile/Attach/Predict
// code the addon uses, on every kernel and batch size, and then throws hostile inputs at it:
// corrupted node arrays (must be refused or evaluated safely) and compiled images modified after
// validation (must never read out of bounds).
//
//   trees_test parity DUMP...     exit 1 on any mismatch
//   trees_test hostile DUMP...    random corruptions (deterministic seed)
//   trees_test bench DUMP         per-kernel timings for 1, 20, 1000 rows
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "trees/tree_eval.h"

using namespace rg::trees;

namespace {

struct Dump {
  std::string name;
  uint32_t numFeatures, numGroups, objective;
  float baseMargin;
  uint32_t numTrees, totalNodes, nRows;
  std::vector<int32_t> nodeOffsets, left, right, splitIndex, groups;
  std::vector<float> splitCondition, weights, rows, expected;
  std::vector<uint8_t> defaultLeft;

  FlatEnsemble Flat() const {
    FlatEnsemble f;
    f.numFeatures = numFeatures;
    f.numGroups = numGroups;
    f.objective = objective;
    f.baseMargin = baseMargin;
    f.numTrees = numTrees;
    f.nodeOffsets = nodeOffsets.data();
    f.totalNodes = totalNodes;
    f.left = left.data();
    f.right = right.data();
    f.splitIndex = splitIndex.data();
    f.splitCondition = splitCondition.data();
    f.defaultLeft = defaultLeft.data();
    f.groups = groups.data();
    f.weights = weights.data();
    return f;
  }
};

bool ReadDump(const std::string& path, Dump& d) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t off = 0;
  auto take = [&](void* dst, size_t n) {
    if (off + n > b.size()) return false;
    std::memcpy(dst, b.data() + off, n);
    off += n;
    return true;
  };
  uint32_t magic;
  if (!take(&magic, 4) || magic != 0x44544752u) return false;
  take(&d.numFeatures, 4);
  take(&d.numGroups, 4);
  take(&d.objective, 4);
  take(&d.baseMargin, 4);
  take(&d.numTrees, 4);
  take(&d.totalNodes, 4);
  if (!take(&d.nRows, 4)) return false;
  auto vec = [&](auto& v, size_t n) {
    v.resize(n);
    return take(v.data(), n * sizeof(v[0]));
  };
  const size_t N = d.totalNodes, T = d.numTrees;
  bool ok = vec(d.nodeOffsets, T + 1) && vec(d.left, N) && vec(d.right, N) && vec(d.splitIndex, N) &&
            vec(d.splitCondition, N) && vec(d.defaultLeft, (N + 3) & ~size_t{3});
  ok = ok && vec(d.groups, T) && vec(d.weights, T) && vec(d.rows, size_t{d.nRows} * d.numFeatures) &&
       vec(d.expected, size_t{d.nRows} * d.numGroups);
  d.defaultLeft.resize(N);
  d.name = path.substr(path.find_last_of('/') + 1);
  return ok && off == b.size();
}

// 16-byte aligned copy of an image (Attach requires the alignment a SharedArrayBuffer gives).
struct AlignedImage {
  std::vector<uint8_t> storage;
  uint8_t* data = nullptr;
  size_t size = 0;
  explicit AlignedImage(const std::vector<uint8_t>& img) : storage(img.size() + 16) {
    auto p = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((16 - p % 16) % 16);
    size = img.size();
    std::memcpy(data, img.data(), size);
  }
};

const KernelChoice kKernels[] = {KernelChoice::kScalar, KernelChoice::kAvx2, KernelChoice::kAvx512,
                                 KernelChoice::kAuto};
const char* const kKernelNames[] = {"scalar", "avx2", "avx512", "auto"};

int failures = 0;
#define EXPECT(cond, ...)                         \
  do {                                            \
    if (!(cond)) {                                \
      ++failures;                                 \
      std::fprintf(stderr, "FAIL: " __VA_ARGS__); \
      std::fprintf(stderr, "\n");                 \
    }                                             \
  } while (0)

// Appends a chain-shaped tree of depth `depth` whose leaves are all 0: it changes no margin
// (x + 0.0f == x) but forces the generic layout (depth > kMaxPerfectDepth).
void AppendDeepZeroTree(Dump& d, uint32_t depth) {
  const int32_t base = static_cast<int32_t>(d.totalNodes);
  const int32_t n = static_cast<int32_t>(2 * depth + 1);
  for (int32_t i = 0; i < n; ++i) {
    const bool inner = (i % 2 == 0) && i < n - 1;
    d.left.push_back(inner ? i + 2 : -1);   // chain continues to the left
    d.right.push_back(inner ? i + 1 : -1);  // right child is a zero leaf
    d.splitIndex.push_back(inner ? i % static_cast<int32_t>(d.numFeatures) : 0);
    d.splitCondition.push_back(inner ? 0.25f * static_cast<float>(i) : 0.f);
    d.defaultLeft.push_back(static_cast<uint8_t>(i % 3 == 0));
  }
  d.totalNodes += static_cast<uint32_t>(n);
  d.nodeOffsets.push_back(base + n);
  d.groups.push_back(0);
  d.weights.push_back(1.f);
  d.numTrees += 1;
}

bool Parity(const Dump& d, const char* label) {
  std::vector<uint8_t> img;
  std::string err;
  if (!Compile(d.Flat(), img, err)) {
    EXPECT(false, "%s %s: compile failed: %s", d.name.c_str(), label, err.c_str());
    return false;
  }
  AlignedImage ai(img);
  Model m;
  if (!Attach(ai.data, ai.size, m, err)) {
    EXPECT(false, "%s %s: attach failed: %s", d.name.c_str(), label, err.c_str());
    return false;
  }
  const size_t ng = d.numGroups, nf = d.numFeatures;
  std::vector<float> reference;
  for (int k = 0; k < 4; ++k) {
    for (size_t batch : {size_t{1}, size_t{3}, size_t{17}, size_t{d.nRows}}) {
      std::vector<float> out(size_t{d.nRows} * ng, -12345.f);
      for (size_t r0 = 0; r0 < d.nRows; r0 += batch) {
        const size_t n = std::min(batch, d.nRows - r0);
        PredictMargin(m, d.rows.data() + r0 * nf, n, out.data() + r0 * ng, kKernels[k]);
      }
      double worst = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        const double e = d.expected[i];
        worst = std::max(worst, std::fabs(out[i] - e) / std::max(1.0, std::fabs(e)));
      }
      EXPECT(worst <= 1e-6, "%s %s kernel %s batch %zu: max diff %g", d.name.c_str(), label, kKernelNames[k], batch,
             worst);
      if (reference.empty()) reference = out;
      EXPECT(std::memcmp(reference.data(), out.data(), out.size() * 4) == 0,
             "%s %s kernel %s batch %zu: not bit-identical to the scalar kernel", d.name.c_str(), label,
             kKernelNames[k], batch);
    }
  }
  std::vector<float> margins(size_t{d.nRows} * ng);
  PredictMargin(m, d.rows.data(), d.nRows, margins.data());
  std::vector<double> values(size_t{d.nRows} * NumValueOutputs(m));
  TransformMargins(m, margins.data(), d.nRows, values.data());
  for (double v : values) EXPECT(std::isfinite(v), "%s: non-finite transformed value", d.name.c_str());
  std::printf("ok %s %s (layout %s)\n", d.name.c_str(), label, m.layout == Layout::kPerfect ? "perfect" : "generic");
  return true;
}

// Random corruptions of the node arrays: Compile must refuse them or produce an image whose
// evaluation stays in bounds (ASan/UBSan watch). Then random edits of a valid image *after*
// Attach (another thread scribbling on the SharedArrayBuffer): evaluation must stay in bounds.
void Hostile(const Dump& clean, uint32_t seed) {
  std::mt19937 rng(seed);
  int refused = 0, accepted = 0;
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY, 0.f, -0.f, 1e38f, -1e38f};
  for (int iter = 0; iter < 300; ++iter) {
    Dump d = clean;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t i = rng() % d.totalNodes;
      switch (rng() % 9) {
        case 0:
          d.left[i] = static_cast<int32_t>(rng() % (d.totalNodes + 4)) - 2;
          break;
        case 1:
          d.right[i] = static_cast<int32_t>(rng());
          break;
        case 2:
          d.splitIndex[i] = static_cast<int32_t>(rng() % (d.numFeatures + 3)) - 1;
          break;
        case 3:
          d.splitCondition[i] = specials[rng() % 7];
          break;
        case 4:
          d.left[i] = 0;
          break;  // cycle back to the root
        case 5:
          d.nodeOffsets[1 + rng() % d.numTrees] += static_cast<int32_t>(rng() % 5) - 2;
          break;
        case 6:
          d.groups[rng() % d.numTrees] = static_cast<int32_t>(rng() % 5) - 1;
          break;
        case 7:
          d.weights[rng() % d.numTrees] = specials[rng() % 7];
          break;
        case 8:
          d.defaultLeft[i] = static_cast<uint8_t>(rng());
          break;
      }
    }
    std::vector<uint8_t> img;
    std::string err;
    if (!Compile(d.Flat(), img, err)) {
      ++refused;
      continue;
    }
    ++accepted;
    AlignedImage ai(img);
    Model m;
    if (!Attach(ai.data, ai.size, m, err)) {
      EXPECT(false, "%s: image from Compile failed Attach: %s", d.name.c_str(), err.c_str());
      continue;
    }
    std::vector<float> out(size_t{d.nRows} * d.numGroups);
    for (int k = 0; k < 4; ++k) PredictMargin(m, d.rows.data(), std::min<size_t>(d.nRows, 40), out.data(), kKernels[k]);
  }
  // Post-attach scribbling on a valid image.
  std::vector<uint8_t> img;
  std::string err;
  Compile(clean.Flat(), img, err);
  for (int iter = 0; iter < 200; ++iter) {
    AlignedImage ai(img);
    Model m;
    if (!Attach(ai.data, ai.size, m, err)) {
      EXPECT(false, "clean image failed Attach: %s", err.c_str());
      return;
    }
    for (int e = 0; e < 64; ++e) {
      const size_t at = sizeof(ImageHeader) + rng() % (ai.size - sizeof(ImageHeader));
      ai.data[at] = static_cast<uint8_t>(rng());
    }
    std::vector<float> out(size_t{clean.nRows} * clean.numGroups);
    for (int k = 0; k < 4; ++k)
      PredictMargin(m, clean.rows.data(), std::min<size_t>(clean.nRows, 40), out.data(), kKernels[k]);
  }
  // Attach must refuse corrupted headers and sizes.
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<uint8_t> bad = img;
    bad[rng() % sizeof(ImageHeader)] = static_cast<uint8_t>(rng());
    if (rng() % 4 == 0) bad.resize(rng() % bad.size());
    AlignedImage ai(bad);
    Model m;
    if (Attach(ai.data, ai.size, m, err)) {
      std::vector<float> out(size_t{clean.nRows} * m.numGroups);
      if (m.numFeatures == clean.numFeatures) {
        for (int k = 0; k < 4; ++k)
          PredictMargin(m, clean.rows.data(), std::min<size_t>(clean.nRows, 40), out.data(), kKernels[k]);
      }
    }
  }
  std::printf("ok hostile %s: %d corrupted models refused, %d accepted and evaluated safely\n", clean.name.c_str(),
              refused, accepted);
}

void Bench(const Dump& d) {
  std::vector<uint8_t> img;
  std::string err;
  if (!Compile(d.Flat(), img, err)) return;
  AlignedImage ai(img);
  Model m;
  Attach(ai.data, ai.size, m, err);
  std::vector<float> rows(1000 * size_t{d.numFeatures});
  for (size_t r = 0; r < 1000; ++r)
    std::memcpy(&rows[r * d.numFeatures], &d.rows[(r % d.nRows) * d.numFeatures], d.numFeatures * 4);
  std::vector<float> out(1000 * size_t{d.numGroups});
  for (int k = 0; k < 4; ++k) {
    for (size_t n : {size_t{1}, size_t{4}, size_t{8}, size_t{16}, size_t{20}, size_t{1000}}) {
      std::vector<double> us;
      const auto start = std::chrono::steady_clock::now();
      while (true) {
        const auto t0 = std::chrono::steady_clock::now();
        PredictMargin(m, rows.data(), n, out.data(), kKernels[k]);
        const auto t1 = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        if (std::chrono::duration<double>(t1 - start).count() > 0.3 && us.size() > 20) break;
      }
      std::sort(us.begin(), us.end());
      std::printf("%s kernel %-6s rows %4zu: median %.2f us (%.3f us/row)\n", d.name.c_str(), kKernelNames[k], n,
                  us[us.size() / 2], us[us.size() / 2] / n);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s parity|hostile|bench DUMP...\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  std::printf("kernel on this CPU: %s\n", ActiveKernelName());
  for (int i = 2; i < argc; ++i) {
    Dump d;
    if (!ReadDump(argv[i], d)) {
      std::fprintf(stderr, "cannot read dump %s\n", argv[i]);
      return 2;
    }
    if (mode == "parity") {
      Parity(d, "perfect");
      Dump deep = d;
      AppendDeepZeroTree(deep, 12);
      Parity(deep, "generic");
    } else if (mode == "hostile") {
      Hostile(d, 1234u + static_cast<uint32_t>(i));
    } else if (mode == "bench") {
      Bench(d);
    }
  }
  if (failures) {
    std::fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  std::printf("all ok\n");
  return 0;
}
