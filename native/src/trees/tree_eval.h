// Tree-ensemble evaluator core: plain C++17, no N-API, so a standalone driver can run it under
// sanitizers. Two steps:
//   1. Compile(): validates an untrusted flat ensemble (node arrays as XGBoost stores them) and
//      writes a compact, read-only byte image (the "compiled model").
//   2. Attach(): validates a compiled image (it may come from another thread or a hostile caller)
//      and returns a Model view over it; Predict*() evaluate rows against that view.
// The image is position-independent (offsets only) so it can live in a SharedArrayBuffer and be
// used by several threads at once. Evaluation never reads outside the image or the row buffer
// even if the image is modified after Attach(): node indices are implicit (perfect layout) or
// bounds-checked (generic layout), feature slots are masked, traversal length is bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rg::trees {

enum class Objective : uint32_t {
  kBinaryLogistic = 0,
  kBinaryLogitraw = 1,
  kRegLogistic = 2,
  kRegSquaredError = 3,
  kRankPairwise = 4,
  kRankNdcg = 5,
  kRankMap = 6,
  kMultiSoftprob = 7,
  kMultiSoftmax = 8,
};
constexpr uint32_t kNumObjectives = 9;

// An ensemble as loaders produce it: per tree, node arrays concatenated; tree t owns nodes
// [nodeOffsets[t], nodeOffsets[t+1]). Node ids inside a tree are local (0 = root).
struct FlatEnsemble {
  uint32_t numFeatures = 0;
  uint32_t numGroups = 0;
  uint32_t objective = 0;
  float baseMargin = 0.f;
  size_t numTrees = 0;
  const int32_t* nodeOffsets = nullptr;  // numTrees + 1 entries
  size_t totalNodes = 0;                 // length of the per-node arrays
  const int32_t* left = nullptr;
  const int32_t* right = nullptr;
  const int32_t* splitIndex = nullptr;
  const float* splitCondition = nullptr;
  const uint8_t* defaultLeft = nullptr;
  const int32_t* groups = nullptr;  // numTrees entries
  const float* weights = nullptr;   // numTrees entries
  // Optional, totalNodes entries: float64 leaf values (LightGBM). When set, the model compiles to
  // the perfect64 layout (or generic64 for deep trees): leaves are these doubles (times the tree
  // weight, in double) and each row's margin is summed in float64 in tree order, as LightGBM does;
  // splits stay float32 `x < t`.
  const double* leafValues64 = nullptr;
  // When set, an input of +inf is read as FLT_MAX. LightGBM goes left when x <= +inf, which
  // `x < t` cannot express for x = +inf; with the clamp, a +inf threshold sends every non-NaN
  // value left and every finite threshold compares exactly as before. Loaders set it only for
  // models whose thresholds are all +inf or below FLT_MAX (XGBoost models leave it off).
  bool clampPositiveInfinity = false;
};

// Limits that keep a hostile model from exhausting memory or time.
constexpr uint32_t kMaxFeatures = 1u << 24;
constexpr uint32_t kMaxGroups = 1u << 16;
constexpr size_t kMaxTrees = 1u << 22;
constexpr size_t kMaxNodes = size_t{1} << 28;
constexpr uint32_t kMaxDepth = 4096;
// Trees padded to a perfect binary tree of at most this depth use the fast layout.
constexpr uint32_t kMaxPerfectDepth = 10;
constexpr size_t kMaxPerfectBytes = size_t{256} << 20;
constexpr uint32_t kMaxSlotWidth = 4096;

// kGeneric64 / kPerfect64: the generic / perfect layout plus a float64 leaf array; margins are
// summed in float64.
enum class Layout : uint32_t { kPerfect = 1, kGeneric = 2, kGeneric64 = 3, kPerfect64 = 4 };

// ImageHeader::flags bits.
constexpr uint32_t kFlagClampPositiveInfinity = 1u;

// Header of the compiled image. Every section offset is derived from these fields, so
// validation reduces to range checks plus "the image has exactly the expected size".
struct ImageHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t layout;
  uint32_t numFeatures;
  uint32_t numGroups;
  uint32_t numTrees;
  uint32_t objective;
  float baseMargin;
  uint32_t depth;       // perfect: padded depth D; generic: max depth (traversal bound)
  uint32_t numUsed;     // perfect: number of distinct features used by splits
  uint32_t slotWidth;   // perfect: staged row width (power of two, >= 2*numUsed)
  uint32_t totalNodes;  // generic: total nodes
  uint32_t flags;       // kFlag* bits
  uint32_t reserved[3];
};
static_assert(sizeof(ImageHeader) == 64, "image header must stay 64 bytes");
constexpr uint32_t kImageMagic = 0x45544752u;  // "RGTE"
constexpr uint32_t kImageVersion = 1;

// Generic layout node: 16 bytes. Leaves have left < 0 and value = leaf * tree weight.
struct GenericNode {
  int32_t feature;  // inner: split feature; leaf: -1
  float value;      // inner: threshold; leaf: weighted leaf value
  int32_t left;     // local child ids; -1 for leaves
  int32_t right;
  // Bit 0 of `flags`: missing goes left. Kept in a separate array to keep the node 16 bytes.
};

// A validated view over a compiled image. Cheap to copy; does not own the bytes.
struct Model {
  Layout layout = Layout::kPerfect;
  uint32_t numFeatures = 0;
  uint32_t numGroups = 0;
  uint32_t numTrees = 0;
  Objective objective = Objective::kBinaryLogistic;
  float baseMargin = 0.f;
  uint32_t depth = 0;
  uint32_t numUsed = 0;
  uint32_t slotWidth = 0;
  uint32_t totalNodes = 0;
  uint32_t treeStride = 0;                 // perfect: floats per tree block (3 * S)
  uint32_t perfectS = 0;                   // perfect: node slots per array (>= 2^depth, >= 32)
  const uint32_t* usedFeatures = nullptr;  // perfect: numUsed original feature ids
  const uint32_t* groups = nullptr;        // numTrees group ids (validated < numGroups)
  const float* perfectTrees = nullptr;     // perfect: numTrees blocks of [thr S | slot S | leaf S]
  const double* perfectLeaf64 = nullptr;   // perfect64: numTrees blocks of S weighted float64 leaves
  const uint32_t* treeOffsets = nullptr;   // generic: numTrees + 1
  const GenericNode* nodes = nullptr;      // generic
  const uint8_t* defaultLeft = nullptr;    // generic, per node
  const double* leaf64 = nullptr;          // generic64: per node, weighted leaf value (0 for inner nodes)
  bool clampPositiveInfinity = false;      // +inf inputs read as FLT_MAX
};

// True when the model's margins are float64 (generic64 / perfect64): use PredictMargin64.
inline bool MarginIsDouble(const Model& m) { return m.layout == Layout::kGeneric64 || m.layout == Layout::kPerfect64; }

// True for the layouts evaluated by the perfect-tree kernels.
inline bool IsPerfect(const Model& m) { return m.layout == Layout::kPerfect || m.layout == Layout::kPerfect64; }

enum class KernelChoice { kAuto, kScalar, kAvx2, kAvx512 };

// Compiles `in` into `image`. Returns false and sets `error` for any invalid input.
bool Compile(const FlatEnsemble& in, std::vector<uint8_t>& image, std::string& error);

// Validates `size` bytes at `data` (must be 16-byte aligned) and fills `model`.
bool Attach(const uint8_t* data, size_t size, Model& model, std::string& error);

// Margins: out has nRows * numGroups floats, row-major. rows has nRows * numFeatures floats.
void PredictMargin(const Model& model, const float* rows, size_t nRows, float* out,
                   KernelChoice kernel = KernelChoice::kAuto);

// Margins in float64: out has nRows * numGroups doubles. Generic64 and perfect64 models sum
// float64 leaves in float64 in tree order; other layouts compute their float32 margins and widen them.
void PredictMargin64(const Model& model, const float* rows, size_t nRows, double* out,
                     KernelChoice kernel = KernelChoice::kAuto);

// Number of values per row for the transformed ('value') output.
uint32_t NumValueOutputs(const Model& model);

// Applies the objective's transform to margins (nRows * numGroups) into out (nRows * NumValueOutputs).
void TransformMargins(const Model& model, const float* margins, size_t nRows, double* out);
void TransformMargins(const Model& model, const double* margins, size_t nRows, double* out);

// Which SIMD kernel PredictMargin uses with kAuto on this CPU ("avx512", "avx2", "scalar").
const char* ActiveKernelName();

bool ParseObjective(const std::string& name, uint32_t& code);

}  // namespace rg::trees
