// Compile / validate / evaluate tree ensembles. See tree_eval.h for the contract.
//
// Perfect layout (used when every tree has depth <= kMaxPerfectDepth): each tree is padded to a
// perfect binary tree of the ensemble's max depth D and stored as one block of three arrays of
// S = max(2^D, 32) entries: thresholds (heap order, children of p are 2p+1 and 2p+2), feature
// slots (int32), leaf values (already multiplied by the dart weight). Shallow leaves are
// replicated over the padded subtree, so every row takes exactly D steps with no branches.
//
// Missing values: rows are "staged" per block of 16 rows into a transposed buffer where every
// used feature appears twice: slot 2u holds x with NaN replaced by +inf, slot 2u+1 holds x with NaN
// replaced by -inf. A node whose missing values go left reads slot 2u+1, so the single test
// `x < threshold` sends NaN the default way (-inf < t) and everything else the ordinary way.
// This is exact for every threshold except -inf / NaN on default-left nodes, which XGBoost never
// writes; a model containing one falls back to the generic layout, which tests isnan explicitly.
// +-inf inputs are ordinary values (x < t in float32), as in XGBoost's inplace_predict, unless the
// model sets clampPositiveInfinity (LightGBM's `x <= +inf`), which reads +inf as FLT_MAX.
//
// Perfect64 (float64 leaves, LightGBM): the perfect layout plus, per tree, S float64 leaves in a
// section after the tree blocks; the kernels walk the same float32 splits and add those leaves
// to float64 accumulators in tree order, the same sums as the generic64 walk.
#include "trees/tree_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "trees/tree_kernels.h"

namespace rg::trees {
namespace {

size_t Pad16(size_t n) { return (n + 15) & ~size_t{15}; }

uint32_t NextPow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

struct TreeShape {
  uint32_t depth = 0;
};

// Walks tree t from its root, checking every reachable node; unreachable nodes (XGBoost's deleted
// nodes) are ignored. Each node may be reached once, which rules out cycles and shared children.
bool CheckTree(const FlatEnsemble& in, size_t t, std::vector<uint8_t>& seen, std::vector<int32_t>& stack,
               std::vector<uint32_t>& depthOf, TreeShape& shape, std::string& error) {
  const int64_t begin = in.nodeOffsets[t];
  const int64_t end = in.nodeOffsets[t + 1];
  const int64_t n = end - begin;
  seen.assign(static_cast<size_t>(n), 0);
  depthOf.assign(static_cast<size_t>(n), 0);
  stack.clear();
  stack.push_back(0);
  seen[0] = 1;
  shape.depth = 0;
  auto fail = [&](const std::string& msg) {
    error = "tree " + std::to_string(t) + ": " + msg;
    return false;
  };
  while (!stack.empty()) {
    const int32_t local = stack.back();
    stack.pop_back();
    const size_t g = static_cast<size_t>(begin + local);
    const uint32_t d = depthOf[static_cast<size_t>(local)];
    const int32_t l = in.left[g];
    if (l == -1) {
      if (!std::isfinite(in.splitCondition[g]))
        return fail("leaf " + std::to_string(local) + " has a non-finite value");
      if (in.leafValues64 != nullptr && !std::isfinite(in.leafValues64[g]))
        return fail("leaf " + std::to_string(local) + " has a non-finite float64 value");
      shape.depth = std::max(shape.depth, d);
      continue;
    }
    const int32_t r = in.right[g];
    if (l < 0 || l >= n || r < 0 || r >= n || l == r || l == local || r == local) {
      return fail("node " + std::to_string(local) + " has children out of range (" + std::to_string(l) + ", " +
                  std::to_string(r) + ")");
    }
    const int32_t f = in.splitIndex[g];
    if (f < 0 || static_cast<uint32_t>(f) >= in.numFeatures) {
      return fail("node " + std::to_string(local) + " splits on feature " + std::to_string(f) + " but the model has " +
                  std::to_string(in.numFeatures) + " features");
    }
    if (d + 1 > kMaxDepth) return fail("deeper than " + std::to_string(kMaxDepth));
    for (int32_t c : {l, r}) {
      if (seen[static_cast<size_t>(c)])
        return fail("node " + std::to_string(c) + " is reached twice (cycle or shared child)");
      seen[static_cast<size_t>(c)] = 1;
      depthOf[static_cast<size_t>(c)] = d + 1;
      stack.push_back(c);
    }
  }
  return true;
}

template <typename T>
T* At(std::vector<uint8_t>& image, size_t offset) {
  return reinterpret_cast<T*>(image.data() + offset);
}

// Where FillPerfect writes one padded tree; leaf64 is null unless the model has float64 leaves.
struct PerfectBlock {
  float* thr;
  int32_t* slot;
  float* leaf;
  double* leaf64;
};

// Fills heap position p of a perfect tree from local node `local` of the source tree.
void FillPerfect(const FlatEnsemble& in, int64_t begin, int32_t local, uint32_t p, uint32_t d, uint32_t D, float weight,
                 const std::vector<int32_t>& usedSlot, const PerfectBlock& out) {
  const size_t g = static_cast<size_t>(begin + local);
  const bool isLeaf = in.left[g] == -1;
  if (d == D) {
    // Only leaves reach depth D (the tree's depth is <= D).
    const uint32_t at = p - ((1u << D) - 1);
    out.leaf[at] = in.splitCondition[g] * weight;
    // The same product the generic64 layout stores, so both layouts sum identical terms.
    if (out.leaf64 != nullptr) out.leaf64[at] = in.leafValues64[g] * static_cast<double>(weight);
    return;
  }
  if (isLeaf) {
    out.thr[p] = 0.f;
    out.slot[p] = 0;
    FillPerfect(in, begin, local, 2 * p + 1, d + 1, D, weight, usedSlot, out);
    FillPerfect(in, begin, local, 2 * p + 2, d + 1, D, weight, usedSlot, out);
    return;
  }
  out.thr[p] = in.splitCondition[g];
  out.slot[p] = 2 * usedSlot[static_cast<size_t>(in.splitIndex[g])] + (in.defaultLeft[g] ? 1 : 0);
  FillPerfect(in, begin, in.left[g], 2 * p + 1, d + 1, D, weight, usedSlot, out);
  FillPerfect(in, begin, in.right[g], 2 * p + 2, d + 1, D, weight, usedSlot, out);
}

}  // namespace

bool ParseObjective(const std::string& name, uint32_t& code) {
  static const char* const kNames[kNumObjectives] = {"binary:logistic",  "binary:logitraw", "reg:logistic",
                                                     "reg:squarederror", "rank:pairwise",   "rank:ndcg",
                                                     "rank:map",         "multi:softprob",  "multi:softmax"};
  for (uint32_t i = 0; i < kNumObjectives; ++i) {
    if (name == kNames[i]) {
      code = i;
      return true;
    }
  }
  return false;
}

bool Compile(const FlatEnsemble& in, std::vector<uint8_t>& image, std::string& error) {
  if (in.numFeatures < 1 || in.numFeatures > kMaxFeatures) {
    error = "numFeatures must be in [1, " + std::to_string(kMaxFeatures) + "], got " + std::to_string(in.numFeatures);
    return false;
  }
  if (in.numGroups < 1 || in.numGroups > kMaxGroups) {
    error = "numGroups must be in [1, " + std::to_string(kMaxGroups) + "], got " + std::to_string(in.numGroups);
    return false;
  }
  if (in.objective >= kNumObjectives) {
    error = "unknown objective code " + std::to_string(in.objective);
    return false;
  }
  if (!std::isfinite(in.baseMargin)) {
    error = "base margin is not finite";
    return false;
  }
  if (in.numTrees > kMaxTrees || in.totalNodes > kMaxNodes) {
    error = "too many trees or nodes";
    return false;
  }
  if (in.nodeOffsets == nullptr || in.nodeOffsets[0] != 0 ||
      static_cast<size_t>(in.nodeOffsets[in.numTrees]) != in.totalNodes) {
    error = "node offsets do not cover the node arrays";
    return false;
  }
  for (size_t t = 0; t < in.numTrees; ++t) {
    if (in.nodeOffsets[t + 1] <= in.nodeOffsets[t]) {
      error = "tree " + std::to_string(t) + " has no nodes";
      return false;
    }
    if (in.groups[t] < 0 || static_cast<uint32_t>(in.groups[t]) >= in.numGroups) {
      error = "tree " + std::to_string(t) + " adds to group " + std::to_string(in.groups[t]) + " but the model has " +
              std::to_string(in.numGroups);
      return false;
    }
    if (!std::isfinite(in.weights[t])) {
      error = "tree " + std::to_string(t) + " has a non-finite weight";
      return false;
    }
  }

  // Validate every tree and gather what the layout decision needs.
  std::vector<uint8_t> seen;
  std::vector<int32_t> stack;
  std::vector<uint32_t> depthOf;
  uint32_t maxDepth = 0;
  bool perfectSafe = true;
  std::vector<int32_t> usedSlot(in.numFeatures, -1);
  std::vector<uint32_t> used;
  for (size_t t = 0; t < in.numTrees; ++t) {
    TreeShape shape;
    if (!CheckTree(in, t, seen, stack, depthOf, shape, error)) return false;
    maxDepth = std::max(maxDepth, shape.depth);
    const int64_t begin = in.nodeOffsets[t];
    const int64_t n = in.nodeOffsets[t + 1] - begin;
    for (int64_t i = 0; i < n; ++i) {
      if (!seen[static_cast<size_t>(i)]) continue;
      const size_t g = static_cast<size_t>(begin + i);
      if (in.left[g] == -1) continue;
      const float c = in.splitCondition[g];
      if (in.defaultLeft[g] && (std::isnan(c) || c == -std::numeric_limits<float>::infinity())) perfectSafe = false;
      const auto f = static_cast<size_t>(in.splitIndex[g]);
      if (usedSlot[f] < 0) {
        usedSlot[f] = static_cast<int32_t>(used.size());
        used.push_back(static_cast<uint32_t>(f));
      }
    }
  }

  const uint32_t numUsed = static_cast<uint32_t>(used.size());
  const uint32_t slotWidth = NextPow2(std::max<uint32_t>(2 * numUsed, 2));
  const uint32_t S = std::max<uint32_t>(1u << std::min(maxDepth, 31u), 32);
  const bool wide = in.leafValues64 != nullptr;
  // Perfect64 adds S float64 leaves per tree to the 3 * S float32 block.
  const size_t perfectTreeBytes = size_t{3} * S * 4 + (wide ? size_t{S} * 8 : 0);
  const bool perfect = perfectSafe && maxDepth <= kMaxPerfectDepth && slotWidth <= kMaxSlotWidth &&
                       in.numTrees * perfectTreeBytes <= kMaxPerfectBytes;

  ImageHeader h{};
  h.magic = kImageMagic;
  h.version = kImageVersion;
  h.numFeatures = in.numFeatures;
  h.numGroups = in.numGroups;
  h.numTrees = static_cast<uint32_t>(in.numTrees);
  h.objective = in.objective;
  h.baseMargin = in.baseMargin;
  h.depth = maxDepth;
  h.flags = in.clampPositiveInfinity ? kFlagClampPositiveInfinity : 0;

  size_t off = sizeof(ImageHeader);
  const size_t groupsOff = off;
  off += Pad16(in.numTrees * 4);
  if (perfect) {
    h.layout = static_cast<uint32_t>(wide ? Layout::kPerfect64 : Layout::kPerfect);
    h.numUsed = numUsed;
    h.slotWidth = slotWidth;
    const size_t usedOff = off;
    off += Pad16(size_t{numUsed} * 4);
    const size_t treesOff = off;
    off += in.numTrees * size_t{3} * S * 4;
    const size_t leaf64Off = off;  // 16-byte aligned: S >= 32, so every tree block is
    if (wide) off += in.numTrees * size_t{S} * 8;
    image.assign(off, 0);
    std::memcpy(image.data(), &h, sizeof h);
    if (numUsed) std::memcpy(image.data() + usedOff, used.data(), size_t{numUsed} * 4);
    for (size_t t = 0; t < in.numTrees; ++t) {
      At<uint32_t>(image, groupsOff)[t] = static_cast<uint32_t>(in.groups[t]);
      float* thr = At<float>(image, treesOff + t * size_t{3} * S * 4);
      const PerfectBlock block{thr, reinterpret_cast<int32_t*>(thr + S), thr + 2 * size_t{S},
                               wide ? At<double>(image, leaf64Off + t * size_t{S} * 8) : nullptr};
      FillPerfect(in, in.nodeOffsets[t], 0, 0, 0, maxDepth, in.weights[t], usedSlot, block);
    }
  } else {
    h.layout = static_cast<uint32_t>(wide ? Layout::kGeneric64 : Layout::kGeneric);
    h.totalNodes = static_cast<uint32_t>(in.totalNodes);
    const size_t offsetsOff = off;
    off += Pad16((in.numTrees + 1) * 4);
    const size_t nodesOff = off;
    off += in.totalNodes * sizeof(GenericNode);
    const size_t dlOff = off;
    off += Pad16(in.totalNodes);
    const size_t leaf64Off = off;  // 16-byte aligned: every section before it is padded
    if (wide) off += in.totalNodes * sizeof(double);
    image.assign(off, 0);
    std::memcpy(image.data(), &h, sizeof h);
    auto* offsets = At<uint32_t>(image, offsetsOff);
    auto* nodes = At<GenericNode>(image, nodesOff);
    auto* dl = At<uint8_t>(image, dlOff);
    for (size_t t = 0; t <= in.numTrees; ++t) offsets[t] = static_cast<uint32_t>(in.nodeOffsets[t]);
    for (size_t t = 0; t < in.numTrees; ++t) {
      At<uint32_t>(image, groupsOff)[t] = static_cast<uint32_t>(in.groups[t]);
      for (int64_t g = in.nodeOffsets[t]; g < in.nodeOffsets[t + 1]; ++g) {
        GenericNode& nd = nodes[g];
        const bool leaf = in.left[g] == -1;
        nd.feature = leaf ? -1 : in.splitIndex[g];
        // Unreachable (deleted) nodes are not validated; make them inert leaves.
        nd.left = leaf ? -1 : in.left[g];
        nd.right = leaf ? -1 : in.right[g];
        nd.value = leaf ? in.splitCondition[g] * in.weights[t] : in.splitCondition[g];
        dl[g] = in.defaultLeft[g] ? 1 : 0;
        if (wide) {
          const double v = leaf ? in.leafValues64[g] * static_cast<double>(in.weights[t]) : 0.0;
          std::memcpy(image.data() + leaf64Off + static_cast<size_t>(g) * sizeof(double), &v, sizeof v);
        }
      }
    }
    // Neutralise unreachable nodes so the image re-validates with a plain range check.
    for (size_t t = 0; t < in.numTrees; ++t) {
      const int64_t begin = in.nodeOffsets[t];
      const int64_t n = in.nodeOffsets[t + 1] - begin;
      TreeShape shape;
      CheckTree(in, t, seen, stack, depthOf, shape, error);
      for (int64_t i = 0; i < n; ++i) {
        if (seen[static_cast<size_t>(i)]) continue;
        GenericNode& nd = nodes[begin + i];
        nd = GenericNode{-1, 0.f, -1, -1};
        if (wide) {
          const double zero = 0.0;
          std::memcpy(image.data() + leaf64Off + static_cast<size_t>(begin + i) * sizeof(double), &zero, sizeof zero);
        }
      }
    }
  }
  return true;
}

bool Attach(const uint8_t* data, size_t size, Model& m, std::string& error) {
  auto fail = [&](const char* msg) {
    error = std::string("compiled tree model is invalid: ") + msg;
    return false;
  };
  if (data == nullptr || size < sizeof(ImageHeader)) return fail("too small");
  if (reinterpret_cast<uintptr_t>(data) % 16 != 0) return fail("not 16-byte aligned");
  ImageHeader h;
  std::memcpy(&h, data, sizeof h);
  if (h.magic != kImageMagic || h.version != kImageVersion) return fail("bad magic or version");
  if (h.numFeatures < 1 || h.numFeatures > kMaxFeatures) return fail("numFeatures out of range");
  if (h.numGroups < 1 || h.numGroups > kMaxGroups) return fail("numGroups out of range");
  if (h.numTrees > kMaxTrees) return fail("numTrees out of range");
  if (h.objective >= kNumObjectives) return fail("objective out of range");
  if (!std::isfinite(h.baseMargin)) return fail("base margin not finite");
  m = Model{};
  m.numFeatures = h.numFeatures;
  m.numGroups = h.numGroups;
  m.numTrees = h.numTrees;
  m.objective = static_cast<Objective>(h.objective);
  m.baseMargin = h.baseMargin;
  m.depth = h.depth;
  if ((h.flags & ~kFlagClampPositiveInfinity) != 0) return fail("unknown flags");
  m.clampPositiveInfinity = (h.flags & kFlagClampPositiveInfinity) != 0;
  size_t off = sizeof(ImageHeader);
  m.groups = reinterpret_cast<const uint32_t*>(data + off);
  off += Pad16(size_t{h.numTrees} * 4);
  if (h.layout == static_cast<uint32_t>(Layout::kPerfect) || h.layout == static_cast<uint32_t>(Layout::kPerfect64)) {
    if (h.depth > kMaxPerfectDepth) return fail("perfect depth out of range");
    if (h.slotWidth < 2 || h.slotWidth > kMaxSlotWidth || (h.slotWidth & (h.slotWidth - 1)) != 0 ||
        size_t{h.numUsed} * 2 > h.slotWidth) {
      return fail("slot width out of range");
    }
    m.layout = static_cast<Layout>(h.layout);
    m.numUsed = h.numUsed;
    m.slotWidth = h.slotWidth;
    m.perfectS = std::max<uint32_t>(1u << h.depth, 32);
    m.treeStride = 3 * m.perfectS;
    m.usedFeatures = reinterpret_cast<const uint32_t*>(data + off);
    off += Pad16(size_t{h.numUsed} * 4);
    m.perfectTrees = reinterpret_cast<const float*>(data + off);
    off += size_t{h.numTrees} * m.treeStride * 4;
    if (m.layout == Layout::kPerfect64) {
      m.perfectLeaf64 = reinterpret_cast<const double*>(data + off);  // 16-byte aligned, see Compile
      off += size_t{h.numTrees} * m.perfectS * 8;
    }
    if (off != size) return fail("size does not match the header");
  } else if (h.layout == static_cast<uint32_t>(Layout::kGeneric) ||
             h.layout == static_cast<uint32_t>(Layout::kGeneric64)) {
    if (h.depth > kMaxDepth) return fail("depth out of range");
    if (h.totalNodes > kMaxNodes) return fail("node count out of range");
    m.layout = static_cast<Layout>(h.layout);
    m.totalNodes = h.totalNodes;
    m.treeOffsets = reinterpret_cast<const uint32_t*>(data + off);
    off += Pad16((size_t{h.numTrees} + 1) * 4);
    m.nodes = reinterpret_cast<const GenericNode*>(data + off);
    off += size_t{h.totalNodes} * sizeof(GenericNode);
    m.defaultLeft = data + off;
    off += Pad16(h.totalNodes);
    if (m.layout == Layout::kGeneric64) {
      m.leaf64 = reinterpret_cast<const double*>(data + off);  // 16-byte aligned (data is, sections are padded)
      off += size_t{h.totalNodes} * sizeof(double);
    }
    if (off != size) return fail("size does not match the header");
  } else {
    return fail("unknown layout");
  }
  // Content checks (the evaluator stays memory-safe without them; they reject garbage early).
  for (uint32_t t = 0; t < h.numTrees; ++t) {
    if (m.groups[t] >= h.numGroups) return fail("tree group out of range");
  }
  if (IsPerfect(m)) {
    for (uint32_t u = 0; u < m.numUsed; ++u) {
      if (m.usedFeatures[u] >= h.numFeatures) return fail("used feature out of range");
    }
  } else {
    if (m.treeOffsets[0] != 0 || m.treeOffsets[h.numTrees] != h.totalNodes) return fail("tree offsets");
    for (uint32_t t = 0; t < h.numTrees; ++t) {
      if (m.treeOffsets[t + 1] <= m.treeOffsets[t]) return fail("empty tree");
      const uint32_t n = m.treeOffsets[t + 1] - m.treeOffsets[t];
      for (uint32_t i = 0; i < n; ++i) {
        const GenericNode& nd = m.nodes[m.treeOffsets[t] + i];
        if (nd.left < 0) continue;
        if (static_cast<uint32_t>(nd.left) >= n || static_cast<uint32_t>(nd.right) >= n)
          return fail("child out of range");
        if (nd.feature < 0 || static_cast<uint32_t>(nd.feature) >= h.numFeatures) return fail("feature out of range");
      }
    }
  }
  return true;
}

uint32_t NumValueOutputs(const Model& m) { return m.objective == Objective::kMultiSoftmax ? 1 : m.numGroups; }

namespace {

template <typename M>
void TransformMarginsT(const Model& m, const M* margins, size_t nRows, double* out) {
  const uint32_t ng = m.numGroups;
  switch (m.objective) {
    case Objective::kBinaryLogistic:
    case Objective::kRegLogistic:
      // Both branches evaluate exp of a non-positive number: no overflow, and p near 0 keeps
      // its relative precision (e / (1 + e)) instead of collapsing to 0 via 1 - something.
      for (size_t i = 0; i < nRows * ng; ++i) {
        const double x = margins[i];
        if (x >= 0) {
          out[i] = 1.0 / (1.0 + std::exp(-x));
        } else {
          const double e = std::exp(x);
          out[i] = e / (1.0 + e);
        }
      }
      break;
    case Objective::kMultiSoftprob:
      for (size_t r = 0; r < nRows; ++r) {
        const M* mr = margins + r * ng;
        double* o = out + r * ng;
        double mx = -std::numeric_limits<double>::infinity();
        for (uint32_t g = 0; g < ng; ++g) mx = std::max(mx, static_cast<double>(mr[g]));
        double sum = 0;
        for (uint32_t g = 0; g < ng; ++g) {
          o[g] = std::exp(static_cast<double>(mr[g]) - mx);
          sum += o[g];
        }
        for (uint32_t g = 0; g < ng; ++g) o[g] /= sum;
      }
      break;
    case Objective::kMultiSoftmax:
      // XGBoost's argmax: the first class with the largest margin.
      for (size_t r = 0; r < nRows; ++r) {
        const M* mr = margins + r * ng;
        uint32_t best = 0;
        for (uint32_t g = 1; g < ng; ++g) {
          if (mr[g] > mr[best]) best = g;
        }
        out[r] = best;
      }
      break;
    default:
      for (size_t i = 0; i < nRows * ng; ++i) out[i] = margins[i];
      break;
  }
}

}  // namespace

void TransformMargins(const Model& m, const float* margins, size_t nRows, double* out) {
  TransformMarginsT(m, margins, nRows, out);
}

void TransformMargins(const Model& m, const double* margins, size_t nRows, double* out) {
  TransformMarginsT(m, margins, nRows, out);
}

}  // namespace rg::trees
