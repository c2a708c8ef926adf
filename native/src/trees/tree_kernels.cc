// Evaluation kernels. Rows go through in blocks of 16: a block is staged once into a transposed
// buffer (slot-major, 16 lanes), then every tree is walked for all rows of the block before the
// next tree, so each row's margin is summed in float32 in tree order, exactly like XGBoost's
// CPU predictor, while the rows give the CPU independent work to overlap memory latency.
//
// Kernels (same results, bit for bit; chosen at run time with __builtin_cpu_supports):
//   scalar : NB rows in lockstep (NB = 1, 2, 4, 8, 16), portable C++.
//   avx2   : 2 x 8 lanes; node data of levels 0-3 by in-register permutes, deeper levels gathered.
//   avx512 : 16 lanes; node data of levels 0-5 and up to 64 leaves by in-register permutes
//            (vpermps / vpermt2ps), so a depth-6 tree needs only the 6 feature gathers.
// Every index a kernel forms is in range by construction (implicit children, masked slots), so
// a compiled image modified after validation can give wrong numbers but never a bad access.
// GCC 12 warns about its own intrinsics headers (uninitialised __Y in _mm512_undefined_*).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#ifndef RG_S1
#define RG_S1 8
#define RG_S2 4
#define RG_S4 2
#endif
#ifndef RG_TREES_AVX512_BLEND_LEVELS
#define RG_TREES_AVX512_BLEND_LEVELS 2
#endif
#ifndef RG_TREES_AVX512_TI
#define RG_TREES_AVX512_TI 4
#endif

#include "trees/tree_kernels.h"

namespace rg::trees {
namespace {

using detail::kLanes;

struct Scratch {
  std::vector<float> xt;   // slotWidth * kLanes staged values
  std::vector<float> acc;  // numGroups * kLanes accumulators
};

Scratch& ThreadScratch() {
  thread_local Scratch s;
  return s;
}

// Rows [0, nb) of the block -> xt[slot * 16 + lane].
void Stage(const Model& m, const float* rows, uint32_t nb, float* xt) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const uint32_t nf = m.numFeatures;
  for (uint32_t u = 0; u < m.numUsed; ++u) {
    uint32_t f = m.usedFeatures[u];
    if (f >= nf) f = 0;  // only a modified image can get here
    float* right = xt + size_t{2} * u * kLanes;
    float* left = right + kLanes;
    // Lanes >= nb keep whatever an earlier block staged (finite or ±inf, never NaN): kernels may
    // compute on them but their results are never written out.
    for (uint32_t r = 0; r < nb; ++r) {
      const float x = rows[size_t{r} * nf + f];
      const bool missing = std::isnan(x);
      right[r] = missing ? kInf : x;
      left[r] = missing ? -kInf : x;
    }
  }
}

// NB rows x TI trees walked in lockstep: NB * TI independent dependency chains, so the core
// overlaps their load latencies. Leaves are added to the accumulators in tree order.
template <int NB, int TI>
void ScalarPerfectBlock(const Model& m, const float* xt, float* acc) {
  const uint32_t D = m.depth;
  const uint32_t S = m.perfectS;
  const uint32_t mask = m.slotWidth - 1;
  const uint32_t leafBase = (1u << D) - 1;
  const uint32_t ng = m.numGroups;
  const size_t stride = m.treeStride;
  uint32_t t = 0;
  auto run = [&](auto tiTag) {
    constexpr int kTi = decltype(tiTag)::value;
    const float* tb = m.perfectTrees + size_t{t} * stride;
    uint32_t idx[kTi][NB];
    for (int k = 0; k < kTi; ++k)
      for (int r = 0; r < NB; ++r) idx[k][r] = 0;
    for (uint32_t d = 0; d < D; ++d) {
      for (int k = 0; k < kTi; ++k) {
        const float* thr = tb + k * stride;
        const auto* slot = reinterpret_cast<const int32_t*>(thr + S);
        for (int r = 0; r < NB; ++r) {
          const uint32_t i = idx[k][r];
          const uint32_t s = static_cast<uint32_t>(slot[i]) & mask;
          const float x = xt[size_t{s} * kLanes + r];
          idx[k][r] = 2 * i + 1 + (x < thr[i] ? 0u : 1u);
        }
      }
    }
    for (int k = 0; k < kTi; ++k) {
      const float* leaf = tb + k * stride + 2 * size_t{S};
      uint32_t g = m.groups[t + k];
      if (g >= ng) g = 0;
      float* a = acc + size_t{g} * kLanes;
      for (int r = 0; r < NB; ++r) a[r] += leaf[idx[k][r] - leafBase];
    }
    t += kTi;
  };
  while (t + TI <= m.numTrees) run(std::integral_constant<int, TI>{});
  while (t < m.numTrees) run(std::integral_constant<int, 1>{});
}

void ScalarPerfect(const Model& m, const float* xt, float* acc, uint32_t nb) {
  if (nb <= 1) return ScalarPerfectBlock<1, RG_S1>(m, xt, acc);
  if (nb <= 2) return ScalarPerfectBlock<2, RG_S2>(m, xt, acc);
  if (nb <= 4) return ScalarPerfectBlock<4, RG_S4>(m, xt, acc);
  if (nb <= 8) return ScalarPerfectBlock<8, 1>(m, xt, acc);
  return ScalarPerfectBlock<16, 1>(m, xt, acc);
}

#if defined(__x86_64__) || defined(__i386__)
#define RG_HAVE_X86_KERNELS 1

__attribute__((target("avx2"))) void Avx2Perfect(const Model& m, const float* xt, float* acc) {
  const uint32_t D = m.depth;
  const uint32_t S = m.perfectS;
  const uint32_t ng = m.numGroups;
  const __m256i lane0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lane1 = _mm256_add_epi32(lane0, _mm256_set1_epi32(8));
  const __m256i maskv = _mm256_set1_epi32(static_cast<int>(m.slotWidth - 1));
  const float* tb = m.perfectTrees;
  for (uint32_t t = 0; t < m.numTrees; ++t, tb += m.treeStride) {
    const float* thr = tb;
    const auto* slot = reinterpret_cast<const int*>(tb + S);
    const float* leaf = tb + 2 * size_t{S};
    __m256i p0 = _mm256_setzero_si256();
    __m256i p1 = _mm256_setzero_si256();
    for (uint32_t d = 0; d < D; ++d) {
      const uint32_t base = (1u << d) - 1;
      __m256 t0, t1;
      __m256i s0, s1;
      if (d <= 3) {
        const __m256 tl = _mm256_loadu_ps(thr + base);
        const __m256i sl = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(slot + base));
        t0 = _mm256_permutevar8x32_ps(tl, p0);
        t1 = _mm256_permutevar8x32_ps(tl, p1);
        s0 = _mm256_permutevar8x32_epi32(sl, p0);
        s1 = _mm256_permutevar8x32_epi32(sl, p1);
      } else {
        const __m256i b = _mm256_set1_epi32(static_cast<int>(base));
        const __m256i g0 = _mm256_add_epi32(p0, b);
        const __m256i g1 = _mm256_add_epi32(p1, b);
        t0 = _mm256_i32gather_ps(thr, g0, 4);
        t1 = _mm256_i32gather_ps(thr, g1, 4);
        s0 = _mm256_i32gather_epi32(slot, g0, 4);
        s1 = _mm256_i32gather_epi32(slot, g1, 4);
      }
      const __m256i x0i = _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(s0, maskv), 4), lane0);
      const __m256i x1i = _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(s1, maskv), 4), lane1);
      const __m256 x0 = _mm256_i32gather_ps(xt, x0i, 4);
      const __m256 x1 = _mm256_i32gather_ps(xt, x1i, 4);
      // all-ones (-1) where the row goes right: !(x < t)
      const __m256i r0 = _mm256_castps_si256(_mm256_cmp_ps(x0, t0, _CMP_NLT_UQ));
      const __m256i r1 = _mm256_castps_si256(_mm256_cmp_ps(x1, t1, _CMP_NLT_UQ));
      p0 = _mm256_sub_epi32(_mm256_add_epi32(p0, p0), r0);
      p1 = _mm256_sub_epi32(_mm256_add_epi32(p1, p1), r1);
    }
    __m256 l0, l1;
    if (D <= 3) {
      const __m256 ll = _mm256_loadu_ps(leaf);
      l0 = _mm256_permutevar8x32_ps(ll, p0);
      l1 = _mm256_permutevar8x32_ps(ll, p1);
    } else {
      l0 = _mm256_i32gather_ps(leaf, p0, 4);
      l1 = _mm256_i32gather_ps(leaf, p1, 4);
    }
    uint32_t g = m.groups[t];
    if (g >= ng) g = 0;
    float* a = acc + size_t{g} * kLanes;
    _mm256_storeu_ps(a, _mm256_add_ps(_mm256_loadu_ps(a), l0));
    _mm256_storeu_ps(a + 8, _mm256_add_ps(_mm256_loadu_ps(a + 8), l1));
  }
}

// Levels whose feature values are picked by loads + blends rather than a gather.
constexpr uint32_t kAvx512BlendLevels = RG_TREES_AVX512_BLEND_LEVELS;

// One tree's step for 16 lanes at level d: node data by permutes (levels 0-5) or gathers.
__attribute__((target("avx512f"), always_inline)) inline __m512i Avx512Level(const float* thr, const int* slot,
                                                                            const float* xt, __m512i p, uint32_t d,
                                                                            __m512i maskv, __m512i lane) {
  __m512 tv;
  __m512i sv;
  if (d <= 4) {
    // 2^d <= 16 nodes at 2^d - 1: one permute; loads stay inside the tree block (S >= 32).
    const uint32_t base = (1u << d) - 1;
    tv = _mm512_permutexvar_ps(p, _mm512_loadu_ps(thr + base));
    sv = _mm512_permutexvar_epi32(p, _mm512_loadu_si512(slot + base));
  } else if (d == 5) {
    // 32 nodes at 31..62: two-register permute (S >= 64 here since D >= 6).
    tv = _mm512_permutex2var_ps(_mm512_loadu_ps(thr + 31), p, _mm512_loadu_ps(thr + 47));
    sv = _mm512_permutex2var_epi32(_mm512_loadu_si512(slot + 31), p, _mm512_loadu_si512(slot + 47));
  } else {
    const __m512i gi = _mm512_add_epi32(p, _mm512_set1_epi32(static_cast<int>((1u << d) - 1)));
    tv = _mm512_i32gather_ps(gi, thr, 4);
    sv = _mm512_i32gather_epi32(gi, slot, 4);
  }
  __m512 x;
  if (d <= kAvx512BlendLevels) {
    // Few candidate nodes: load each candidate's feature column (16 contiguous lanes) and pick
    // per lane with blends keyed by the path bits, instead of a 16-element gather.
    const uint32_t count = 1u << d;
    const uint32_t base = count - 1;
    const uint32_t smask = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(maskv)));
    __m512 v[1u << kAvx512BlendLevels];
    for (uint32_t n = 0; n < count; ++n) {
      v[n] = _mm512_loadu_ps(xt + size_t{static_cast<uint32_t>(slot[base + n]) & smask} * kLanes);
    }
    for (uint32_t bit = 1, width = count; width > 1; bit <<= 1, width >>= 1) {
      const __mmask16 k = _mm512_test_epi32_mask(p, _mm512_set1_epi32(static_cast<int>(bit)));
      for (uint32_t n = 0; n < width / 2; ++n) v[n] = _mm512_mask_blend_ps(k, v[2 * n], v[2 * n + 1]);
    }
    x = v[0];
  } else {
    const __m512i xi = _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(sv, maskv), 4), lane);
#ifdef RG_EXPERIMENT_NOGATHER
    x = _mm512_castsi512_ps(xi);
#else
    x = _mm512_i32gather_ps(xi, xt, 4);
#endif
  }
  const __mmask16 right = _mm512_cmp_ps_mask(x, tv, _CMP_NLT_UQ);
  const __m512i twice = _mm512_add_epi32(p, p);
  return _mm512_mask_add_epi32(twice, right, twice, _mm512_set1_epi32(1));
}

__attribute__((target("avx512f"), always_inline)) inline __m512 Avx512Leaf(const float* leaf, __m512i p, uint32_t D) {
  if (D <= 4) return _mm512_permutexvar_ps(p, _mm512_loadu_ps(leaf));
  if (D == 5) return _mm512_permutex2var_ps(_mm512_loadu_ps(leaf), p, _mm512_loadu_ps(leaf + 16));
  if (D == 6) {
    const __m512 lo = _mm512_permutex2var_ps(_mm512_loadu_ps(leaf), p, _mm512_loadu_ps(leaf + 16));
    const __m512 hi = _mm512_permutex2var_ps(_mm512_loadu_ps(leaf + 32), p, _mm512_loadu_ps(leaf + 48));
    const __mmask16 upper = _mm512_test_epi32_mask(p, _mm512_set1_epi32(32));
    return _mm512_mask_blend_ps(upper, lo, hi);
  }
  return _mm512_i32gather_ps(p, leaf, 4);
}

// Levels 0-2 of one tree for 16 lanes without gathers or permutes: the 7 nodes' feature columns
// are loaded whole and compared with their (broadcast) thresholds, giving 7 lane masks; the path
// bits are then selected with mask logic. Returns the local index at level 3 (4*b0 + 2*b1 + b2).
__attribute__((target("avx512f"), always_inline)) inline __m512i Avx512Top3(const float* thr, const int* slot,
                                                                           const float* xt, uint32_t smask) {
  auto right = [&](int n) __attribute__((target("avx512f"), always_inline)) {
    const __m512 x = _mm512_loadu_ps(xt + size_t{static_cast<uint32_t>(slot[n]) & smask} * kLanes);
    return static_cast<uint32_t>(_mm512_cmp_ps_mask(x, _mm512_set1_ps(thr[n]), _CMP_NLT_UQ));
  };
  const uint32_t c0 = right(0), c1 = right(1), c2 = right(2), c3 = right(3), c4 = right(4), c5 = right(5),
                 c6 = right(6);
  const uint32_t b0 = c0;
  const uint32_t b1 = (b0 & c2) | (~b0 & c1);
  const uint32_t b2 = (b0 & ((b1 & c6) | (~b1 & c5))) | (~b0 & ((b1 & c4) | (~b1 & c3)));
  __m512i p = _mm512_maskz_mov_epi32(static_cast<__mmask16>(b0), _mm512_set1_epi32(4));
  p = _mm512_mask_add_epi32(p, static_cast<__mmask16>(b1), p, _mm512_set1_epi32(2));
  return _mm512_mask_add_epi32(p, static_cast<__mmask16>(b2), p, _mm512_set1_epi32(1));
}

#ifndef RG_TREES_AVX512_TOP3
#define RG_TREES_AVX512_TOP3 1
#endif
constexpr bool kTop3 = RG_TREES_AVX512_TOP3 != 0;

// TI trees interleaved (independent chains); leaves added in tree order.
template <int TI>
__attribute__((target("avx512f"))) void Avx512PerfectT(const Model& m, const float* xt, float* acc) {
  const uint32_t D = m.depth;
  const uint32_t S = m.perfectS;
  const uint32_t ng = m.numGroups;
  const size_t stride = m.treeStride;
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i maskv = _mm512_set1_epi32(static_cast<int>(m.slotWidth - 1));
  const uint32_t smask = m.slotWidth - 1;
  uint32_t t = 0;
  auto run = [&](auto tiTag) __attribute__((target("avx512f"))) {
    constexpr int kTi = decltype(tiTag)::value;
    const float* tb = m.perfectTrees + size_t{t} * stride;
    __m512i p[kTi];
    uint32_t d = 0;
    if (kTop3 && D >= 3) {
      for (int k = 0; k < kTi; ++k) {
        const float* thr = tb + k * stride;
        p[k] = Avx512Top3(thr, reinterpret_cast<const int*>(thr + S), xt, smask);
      }
      d = 3;
    } else {
      for (int k = 0; k < kTi; ++k) p[k] = _mm512_setzero_si512();
    }
    for (; d < D; ++d) {
      for (int k = 0; k < kTi; ++k) {
        const float* thr = tb + k * stride;
        p[k] = Avx512Level(thr, reinterpret_cast<const int*>(thr + S), xt, p[k], d, maskv, lane);
      }
    }
    for (int k = 0; k < kTi; ++k) {
      const __m512 lv = Avx512Leaf(tb + k * stride + 2 * size_t{S}, p[k], D);
      uint32_t g = m.groups[t + k];
      if (g >= ng) g = 0;
      float* a = acc + size_t{g} * kLanes;
      _mm512_storeu_ps(a, _mm512_add_ps(_mm512_loadu_ps(a), lv));
    }
    t += kTi;
  };
  while (t + TI <= m.numTrees) run(std::integral_constant<int, TI>{});
  while (t < m.numTrees) run(std::integral_constant<int, 1>{});
}

__attribute__((target("avx512f"))) void Avx512Perfect(const Model& m, const float* xt, float* acc) {
  Avx512PerfectT<RG_TREES_AVX512_TI>(m, xt, acc);
}

bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
bool CpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#else
bool CpuHasAvx2() { return false; }
bool CpuHasAvx512() { return false; }
#endif

KernelChoice Resolve(KernelChoice k) {
  static const KernelChoice best = [] {
    const char* forced = std::getenv("RG_TREES_KERNEL");
    if (forced != nullptr) {
      if (std::strcmp(forced, "scalar") == 0) return KernelChoice::kScalar;
      if (std::strcmp(forced, "avx2") == 0 && CpuHasAvx2()) return KernelChoice::kAvx2;
    }
    if (CpuHasAvx512()) return KernelChoice::kAvx512;
    if (CpuHasAvx2()) return KernelChoice::kAvx2;
    return KernelChoice::kScalar;
  }();
  if (k == KernelChoice::kAuto) return best;
  if (k == KernelChoice::kAvx512 && !CpuHasAvx512()) return CpuHasAvx2() ? KernelChoice::kAvx2 : KernelChoice::kScalar;
  if (k == KernelChoice::kAvx2 && !CpuHasAvx2()) return KernelChoice::kScalar;
  return k;
}

// Rows in a block below which the scalar lockstep kernel beats a SIMD kernel that always pays
// for all 16 lanes (measured on logistic_t500_d6, see docs/trees-evaluator.md).
constexpr uint32_t kAvx512MinRows = 5;
constexpr uint32_t kAvx2MinRows = 9;

void PredictPerfect(const Model& m, const float* rows, size_t nRows, float* out, KernelChoice kernel) {
  Scratch& s = ThreadScratch();
  const size_t xtSize = size_t{m.slotWidth} * kLanes;
  if (s.xt.size() < xtSize) s.xt.resize(xtSize, 0.f);
  const size_t accSize = size_t{m.numGroups} * kLanes;
  if (s.acc.size() < accSize) s.acc.resize(accSize);
  float* xt = s.xt.data();
  float* acc = s.acc.data();
  const uint32_t ng = m.numGroups;
  const uint32_t nf = m.numFeatures;
  for (size_t r0 = 0; r0 < nRows; r0 += kLanes) {
    const auto nb = static_cast<uint32_t>(std::min<size_t>(kLanes, nRows - r0));
    Stage(m, rows + r0 * nf, nb, xt);
    std::fill(acc, acc + accSize, m.baseMargin);
    KernelChoice k = kernel;
    if ((k == KernelChoice::kAvx512 && nb < kAvx512MinRows) || (k == KernelChoice::kAvx2 && nb < kAvx2MinRows)) {
      k = KernelChoice::kScalar;
    }
#ifdef RG_HAVE_X86_KERNELS
    if (k == KernelChoice::kAvx512) {
      Avx512Perfect(m, xt, acc);
    } else if (k == KernelChoice::kAvx2) {
      Avx2Perfect(m, xt, acc);
    } else {
      ScalarPerfect(m, xt, acc, nb);
    }
#else
    ScalarPerfect(m, xt, acc, nb);
#endif
    float* o = out + r0 * ng;
    for (uint32_t r = 0; r < nb; ++r) {
      for (uint32_t g = 0; g < ng; ++g) o[size_t{r} * ng + g] = acc[size_t{g} * kLanes + r];
    }
  }
}

// Deep or unusual trees: node-by-node walk with explicit NaN handling. Indices, features and
// the number of steps are bounded so a modified image cannot read out of range or loop.
void PredictGeneric(const Model& m, const float* rows, size_t nRows, float* out) {
  const uint32_t ng = m.numGroups;
  const uint32_t nf = m.numFeatures;
  const uint32_t total = m.totalNodes;
  for (size_t r = 0; r < nRows; ++r) {
    const float* x = rows + r * nf;
    float* o = out + r * ng;
    for (uint32_t g = 0; g < ng; ++g) o[g] = m.baseMargin;
    for (uint32_t t = 0; t < m.numTrees; ++t) {
      const uint32_t begin = std::min(m.treeOffsets[t], total);
      const uint32_t end = std::min(m.treeOffsets[t + 1], total);
      if (end <= begin) continue;
      const uint32_t n = end - begin;
      const GenericNode* nodes = m.nodes + begin;
      const uint8_t* dl = m.defaultLeft + begin;
      uint32_t i = 0;
      for (uint32_t step = 0; step <= m.depth && nodes[i].left >= 0; ++step) {
        const GenericNode& nd = nodes[i];
        const auto f = static_cast<uint32_t>(nd.feature);
        const float v = f < nf ? x[f] : std::numeric_limits<float>::quiet_NaN();
        const bool left = std::isnan(v) ? dl[i] != 0 : v < nd.value;
        const auto next = static_cast<uint32_t>(left ? nd.left : nd.right);
        i = next < n ? next : 0;
      }
      uint32_t g = m.groups[t];
      if (g >= ng) g = 0;
      o[g] += nodes[i].left < 0 ? nodes[i].value : 0.f;
    }
  }
}

}  // namespace

void PredictMargin(const Model& m, const float* rows, size_t nRows, float* out, KernelChoice kernel) {
  if (nRows == 0) return;
  if (m.layout == Layout::kGeneric) {
    PredictGeneric(m, rows, nRows, out);
  } else {
    PredictPerfect(m, rows, nRows, out, Resolve(kernel));
  }
}

const char* ActiveKernelName() {
  switch (Resolve(KernelChoice::kAuto)) {
    case KernelChoice::kAvx512:
      return "avx512";
    case KernelChoice::kAvx2:
      return "avx2";
    default:
      return "scalar";
  }
}

}  // namespace rg::trees
#pragma GCC diagnostic pop
