// Generic64 layout (float64 leaves, LightGBM models) under ASan+UBSan: compile, attach, float64
// sums, truncated images, images scribbled over after validation. Run by scripts/native-sanitize.sh.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "trees/tree_eval.h"
using namespace rg::trees;
int main() {
  // 2 trees: root split on f0 < 0.5 (NaN left) -> leaves.
  std::vector<int32_t> offs{0, 3, 4}, left{1, -1, -1, -1}, right{2, -1, -1, -1}, split{0, 0, 0, 0}, groups{0, 0};
  std::vector<float> cond{0.5f, 0.1f, 0.2f, 0.3f}, weights{1.f, 1.f};
  std::vector<uint8_t> dl{1, 0, 0, 0};
  std::vector<double> leaf{0, 0.1, 0.2, 1e-17};
  FlatEnsemble in;
  in.numFeatures = 1;
  in.numGroups = 1;
  in.objective = 3;
  in.numTrees = 2;
  in.nodeOffsets = offs.data();
  in.totalNodes = 4;
  in.left = left.data();
  in.right = right.data();
  in.splitIndex = split.data();
  in.splitCondition = cond.data();
  in.defaultLeft = dl.data();
  in.groups = groups.data();
  in.weights = weights.data();
  in.leafValues64 = leaf.data();
  std::vector<uint8_t> image;
  std::string err;
  if (!Compile(in, image, err)) {
    std::printf("compile: %s\n", err.c_str());
    return 1;
  }
  std::vector<uint8_t> aligned(image.size() + 16);
  uint8_t* p = aligned.data() + (16 - reinterpret_cast<uintptr_t>(aligned.data()) % 16) % 16;
  std::memcpy(p, image.data(), image.size());
  Model m;
  if (!Attach(p, image.size(), m, err) || !MarginIsDouble(m)) {
    std::printf("attach: %s\n", err.c_str());
    return 1;
  }
  float rows[3] = {0.f, 1.f, NAN};
  double out[3], vals[3];
  PredictMargin64(m, rows, 3, out);
  TransformMargins(m, out, 3, vals);
  if (out[0] != 0.1 + 1e-17 || out[1] != 0.2 + 1e-17 || out[2] != 0.1 + 1e-17) {
    std::printf("sum wrong %.17g %.17g\n", out[0], out[1]);
    return 1;
  }
  float out32[3];
  PredictMargin(m, rows, 3, out32);
  // Truncated / extended images are refused.
  if (Attach(p, image.size() - 8, m, err) || Attach(p, image.size() + 8 > image.size() ? image.size() - 16 : 0, m, err))
    return 1;
  // Scribble over every byte after attach: evaluation must stay in bounds.
  if (!Attach(p, image.size(), m, err)) return 1;
  std::srand(1);
  for (int round = 0; round < 2000; ++round) {
    for (size_t i = 64; i < image.size(); ++i) p[i] = static_cast<uint8_t>(std::rand());
    PredictMargin64(m, rows, 3, out);
    TransformMargins(m, out, 3, vals);
  }
  // Non-finite float64 leaf refused at compile.
  leaf[1] = INFINITY;
  if (Compile(in, image, err)) return 1;
  std::printf("generic64 ok\n");
  return 0;
}
