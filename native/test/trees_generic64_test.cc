// Float64-leaf layouts (LightGBM models) under ASan+UBSan: perfect64 (shallow trees) and generic64
// (a tree deeper than kMaxPerfectDepth): compile, attach, float64 sums equal across layouts and
// kernels, the +inf clamp, truncated images, images scribbled over after validation. Run by
// scripts/native-sanitize.sh.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "trees/tree_eval.h"
using namespace rg::trees;

namespace {

struct Ensemble {
  std::vector<int32_t> offs, left, right, split, groups;
  std::vector<float> cond, weights;
  std::vector<uint8_t> dl;
  std::vector<double> leaf;
  FlatEnsemble flat(bool clamp) {
    FlatEnsemble in;
    in.numFeatures = 2;
    in.numGroups = 1;
    in.objective = 3;
    in.numTrees = groups.size();
    in.nodeOffsets = offs.data();
    in.totalNodes = left.size();
    in.left = left.data();
    in.right = right.data();
    in.splitIndex = split.data();
    in.splitCondition = cond.data();
    in.defaultLeft = dl.data();
    in.groups = groups.data();
    in.weights = weights.data();
    in.leafValues64 = leaf.data();
    in.clampPositiveInfinity = clamp;
    return in;
  }
};

// Tree 0: f0 < 0.5 (NaN left) -> 0.1 | 0.2. Tree 1: a single leaf 1e-17. Tree 2: f1 < +inf (NaN
// right) -> 0.25 | 0.5, LightGBM's "present vs missing" split. With `chainDepth` > 0, tree 3 is a
// chain of that many splits on f0 < -k (so the model is too deep for the perfect layout).
Ensemble Make(int chainDepth) {
  const float inf = std::numeric_limits<float>::infinity();
  Ensemble e;
  e.offs = {0, 3, 4, 7};
  e.left = {1, -1, -1, -1, 1, -1, -1};
  e.right = {2, -1, -1, -1, 2, -1, -1};
  e.split = {0, 0, 0, 0, 1, 0, 0};
  e.cond = {0.5f, 0.1f, 0.2f, 0.f, inf, 0.25f, 0.5f};
  e.dl = {1, 0, 0, 0, 0, 0, 0};
  e.leaf = {0, 0.1, 0.2, 1e-17, 0, 0.25, 0.5};
  e.groups = {0, 0, 0};
  e.weights = {1.f, 1.f, 1.f};
  if (chainDepth > 0) {
    const auto base = static_cast<int32_t>(e.left.size());
    // Node 2k splits (go left to leaf 2k+1, right to 2k+2); the last right child is a leaf.
    for (int k = 0; k < chainDepth; ++k) {
      e.left.push_back(2 * k + 1);
      e.right.push_back(2 * k + 2);
      e.split.push_back(0);
      e.cond.push_back(static_cast<float>(-k));
      e.dl.push_back(0);
      e.leaf.push_back(0);
      e.left.push_back(-1);
      e.right.push_back(-1);
      e.split.push_back(0);
      e.cond.push_back(0.f);
      e.dl.push_back(0);
      e.leaf.push_back(0.0);
    }
    e.left.push_back(-1);
    e.right.push_back(-1);
    e.split.push_back(0);
    e.cond.push_back(0.f);
    e.dl.push_back(0);
    e.leaf.push_back(0.0);
    e.offs.push_back(static_cast<int32_t>(e.left.size()));
    e.groups.push_back(0);
    e.weights.push_back(1.f);
    (void)base;
  }
  return e;
}

struct Image {
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> buf;
  uint8_t* p = nullptr;
  size_t size = 0;
};

bool Build(FlatEnsemble in, Image& im, Model& m) {
  std::string err;
  if (!Compile(in, im.bytes, err)) {
    std::printf("compile: %s\n", err.c_str());
    return false;
  }
  im.buf.assign(im.bytes.size() + 16, 0);
  im.p = im.buf.data() + (16 - reinterpret_cast<uintptr_t>(im.buf.data()) % 16) % 16;
  std::memcpy(im.p, im.bytes.data(), im.bytes.size());
  im.size = im.bytes.size();
  if (!Attach(im.p, im.size, m, err) || !MarginIsDouble(m)) {
    std::printf("attach: %s\n", err.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main() {
  const float inf = std::numeric_limits<float>::infinity();
  // Rows: (f0, f1). Row 3 has f1 = +inf: left at the +inf threshold only with the clamp.
  // Twice the same 5 rows: 10 rows reach the AVX2 kernel (9 or more) as well as AVX-512's.
  const float rows[] = {0.f, 1.f, 1.f, NAN, NAN, -inf, 1.f, inf, -5.f, 3.f,
                        0.f, 1.f, 1.f, NAN, NAN, -inf, 1.f, inf, -5.f, 3.f};
  const size_t n = 10;
  const double t0[] = {0.1, 0.2, 0.1, 0.2, 0.1, 0.1, 0.2, 0.1, 0.2, 0.1};
  const double t2Clamped[] = {0.25, 0.5, 0.25, 0.25, 0.25, 0.25, 0.5, 0.25, 0.25, 0.25};
  for (int deep = 0; deep <= 1; ++deep) {
    for (int clamp = 0; clamp <= 1; ++clamp) {
      Ensemble e = Make(deep ? 12 : 0);
      Image im;
      Model m;
      if (!Build(e.flat(clamp != 0), im, m)) return 1;
      const Layout want = deep ? Layout::kGeneric64 : Layout::kPerfect64;
      if (m.layout != want || m.clampPositiveInfinity != (clamp != 0)) {
        std::printf("layout %u / clamp %d unexpected\n", static_cast<unsigned>(m.layout), clamp);
        return 1;
      }
      for (int kernel = 0; kernel <= 3; ++kernel) {
        double out[n];
        PredictMargin64(m, rows, n, out, static_cast<KernelChoice>(kernel));
        for (size_t r = 0; r < n; ++r) {
          const double t2 = clamp ? t2Clamped[r] : (r % 5 == 3 ? 0.5 : t2Clamped[r]);
          double want64 = 0.0;
          want64 += t0[r];
          want64 += 1e-17;
          want64 += t2;
          if (deep) want64 += 0.0;
          if (out[r] != want64) {
            std::printf("deep %d clamp %d kernel %d row %zu: %.17g != %.17g\n", deep, clamp, kernel, r, out[r], want64);
            return 1;
          }
        }
      }
      double vals[n];
      double out[n];
      PredictMargin64(m, rows, n, out);
      TransformMargins(m, out, n, vals);
      float out32[n];
      PredictMargin(m, rows, n, out32);
      // Truncated / extended images and unknown flag bits are refused.
      std::string err;
      Model m2;
      if (Attach(im.p, im.size - 8, m2, err) || Attach(im.p, im.size - 16, m2, err)) return 1;
      ImageHeader h;
      std::memcpy(&h, im.p, sizeof h);
      h.flags |= 2u;
      std::memcpy(im.p, &h, sizeof h);
      if (Attach(im.p, im.size, m2, err)) return 1;
      h.flags &= ~2u;
      std::memcpy(im.p, &h, sizeof h);
      // Scribble over every byte after attach: evaluation must stay in bounds.
      if (!Attach(im.p, im.size, m, err)) return 1;
      std::srand(1);
      for (int round = 0; round < 1000; ++round) {
        for (size_t i = 64; i < im.size; ++i) im.p[i] = static_cast<uint8_t>(std::rand());
        for (int kernel = 0; kernel <= 3; ++kernel) PredictMargin64(m, rows, n, out, static_cast<KernelChoice>(kernel));
        PredictMargin(m, rows, n, out32);
        TransformMargins(m, out, n, vals);
      }
    }
  }
  // Non-finite float64 leaf refused at compile.
  Ensemble e = Make(0);
  e.leaf[1] = INFINITY;
  std::vector<uint8_t> image;
  std::string err;
  if (Compile(e.flat(false), image, err)) return 1;
  std::printf("float64 layouts ok\n");
  return 0;
}
