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
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

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

// Rows [0, nb) of the block -> xt[slot * 16 + lane]; lanes >= nb are zero.
void Stage(const Model& m, const float* rows, uint32_t nb, float* xt) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const uint32_t nf = m.numFeatures;
  for (uint32_t u = 0; u < m.numUsed; ++u) {
    uint32_t f = m.usedFeatures[u];
    if (f >= nf) f = 0;  // only a modified image can get here
    float* right = xt + size_t{2} * u * kLanes;
    float* left = right + kLanes;
    uint32_t r = 0;
    for (; r < nb; ++r) {
      const float x = rows[size_t{r} * nf + f];
      const bool missing = std::isnan(x);
      right[r] = missing ? kInf : x;
      left[r] = missing ? -kInf : x;
    }
    for (; r < kLanes; ++r) right[r] = left[r] = 0.f;
  }
}

template <int NB>
void ScalarPerfectBlock(const Model& m, const float* xt, float* acc) {
  const uint32_t D = m.depth;
  const uint32_t S = m.perfectS;
  const uint32_t mask = m.slotWidth - 1;
  const uint32_t leafBase = (1u << D) - 1;
  const uint32_t ng = m.numGroups;
  const float* tb = m.perfectTrees;
  for (uint32_t t = 0; t < m.numTrees; ++t, tb += m.treeStride) {
    const float* thr = tb;
    const auto* slot = reinterpret_cast<const int32_t*>(tb + S);
    const float* leaf = tb + 2 * size_t{S};
    uint32_t idx[NB];
    for (int r = 0; r < NB; ++r) idx[r] = 0;
    for (uint32_t d = 0; d < D; ++d) {
      for (int r = 0; r < NB; ++r) {
        const uint32_t i = idx[r];
        const uint32_t s = static_cast<uint32_t>(slot[i]) & mask;
        const float x = xt[size_t{s} * kLanes + r];
        idx[r] = 2 * i + 1 + (x < thr[i] ? 0u : 1u);
      }
    }
    uint32_t g = m.groups[t];
    if (g >= ng) g = 0;
    float* a = acc + size_t{g} * kLanes;
    for (int r = 0; r < NB; ++r) a[r] += leaf[idx[r] - leafBase];
  }
}

void ScalarPerfect(const Model& m, const float* xt, float* acc, uint32_t nb) {
  if (nb <= 1) return ScalarPerfectBlock<1>(m, xt, acc);
  if (nb <= 2) return ScalarPerfectBlock<2>(m, xt, acc);
  if (nb <= 4) return ScalarPerfectBlock<4>(m, xt, acc);
  if (nb <= 8) return ScalarPerfectBlock<8>(m, xt, acc);
  return ScalarPerfectBlock<16>(m, xt, acc);
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

__attribute__((target("avx512f"))) void Avx512Perfect(const Model& m, const float* xt, float* acc) {
  const uint32_t D = m.depth;
  const uint32_t S = m.perfectS;
  const uint32_t ng = m.numGroups;
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i maskv = _mm512_set1_epi32(static_cast<int>(m.slotWidth - 1));
  const __m512i one = _mm512_set1_epi32(1);
  const float* tb = m.perfectTrees;
  for (uint32_t t = 0; t < m.numTrees; ++t, tb += m.treeStride) {
    const float* thr = tb;
    const auto* slot = reinterpret_cast<const int*>(tb + S);
    const float* leaf = tb + 2 * size_t{S};
    __m512i p = _mm512_setzero_si512();
    for (uint32_t d = 0; d < D; ++d) {
      const uint32_t base = (1u << d) - 1;
      __m512 tv;
      __m512i sv;
      if (d <= 4) {
        // 2^d <= 16 nodes: one permute; loads stay inside the tree block (S >= 32).
        tv = _mm512_permutexvar_ps(p, _mm512_loadu_ps(thr + base));
        sv = _mm512_permutexvar_epi32(p, _mm512_loadu_si512(slot + base));
      } else if (d == 5) {
        // 32 nodes at 31..62: two-register permute (S >= 64 here since D >= 6).
        tv = _mm512_permutex2var_ps(_mm512_loadu_ps(thr + 31), p, _mm512_loadu_ps(thr + 47));
        sv = _mm512_permutex2var_epi32(_mm512_loadu_si512(slot + 31), p, _mm512_loadu_si512(slot + 47));
      } else {
        const __m512i gi = _mm512_add_epi32(p, _mm512_set1_epi32(static_cast<int>(base)));
        tv = _mm512_i32gather_ps(gi, thr, 4);
        sv = _mm512_i32gather_epi32(gi, slot, 4);
      }
      const __m512i xi = _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(sv, maskv), 4), lane);
      const __m512 x = _mm512_i32gather_ps(xi, xt, 4);
      const __mmask16 right = _mm512_cmp_ps_mask(x, tv, _CMP_NLT_UQ);
      const __m512i twice = _mm512_add_epi32(p, p);
      p = _mm512_mask_add_epi32(twice, right, twice, one);
    }
    __m512 lv;
    if (D <= 4) {
      lv = _mm512_permutexvar_ps(p, _mm512_loadu_ps(leaf));
    } else if (D == 5) {
      lv = _mm512_permutex2var_ps(_mm512_loadu_ps(leaf), p, _mm512_loadu_ps(leaf + 16));
    } else if (D == 6) {
      const __m512 lo = _mm512_permutex2var_ps(_mm512_loadu_ps(leaf), p, _mm512_loadu_ps(leaf + 16));
      const __m512 hi = _mm512_permutex2var_ps(_mm512_loadu_ps(leaf + 32), p, _mm512_loadu_ps(leaf + 48));
      const __mmask16 upper = _mm512_test_epi32_mask(p, _mm512_set1_epi32(32));
      lv = _mm512_mask_blend_ps(upper, lo, hi);
    } else {
      lv = _mm512_i32gather_ps(p, leaf, 4);
    }
    uint32_t g = m.groups[t];
    if (g >= ng) g = 0;
    float* a = acc + size_t{g} * kLanes;
    _mm512_storeu_ps(a, _mm512_add_ps(_mm512_loadu_ps(a), lv));
  }
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
constexpr uint32_t kSimdMinRows = 4;

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
    if (k != KernelChoice::kScalar && nb < kSimdMinRows) k = KernelChoice::kScalar;
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
