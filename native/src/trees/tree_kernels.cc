// Evaluation kernels. Rows go through in blocks of 16: a block is staged once into a transposed
// buffer (slot-major, 16 lanes), then every tree is walked for all rows of the block before the
// next tree, so each row's margin is summed in float32 in tree order, exactly like XGBoost's
// CPU predictor, while the rows give the CPU independent work to overlap memory latency.
//
// Kernels (same results, bit for bit; chosen at run time with __builtin_cpu_supports, so the file
// is built for baseline x86-64 and each SIMD kernel carries its own target attribute; on other
// architectures only the scalar kernel is compiled):
//   scalar : NB rows x TI trees in lockstep (1x8, 2x4, 4x2, 8x1, 16x1), portable C++.
//   avx2   : 2 x 8 lanes, 4 trees interleaved; levels 0-3 like avx512 (column compares +
//            movemask logic), deeper levels gather node data and feature values.
//   avx512 : 16 lanes, 4 trees interleaved. Levels 0-3: whole feature columns compared with
//            broadcast thresholds, path picked by mask logic (no gather). Levels 4-5 and up to 64
//            leaves: node data by in-register permutes (vpermps / vpermt2ps), feature values
//            gathered; a depth-6 tree costs 2 gathers per 16 rows.
// Every index a kernel forms is in range by construction (implicit children, masked slots), so
// a compiled image modified after validation can give wrong numbers but never a bad access.
// GCC 12 warns about its own intrinsics headers (uninitialised __Y in _mm512_undefined_*).
#if (defined(__x86_64__) || defined(_M_X64) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define RG_HAVE_X86_KERNELS 1
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#ifdef RG_HAVE_X86_KERNELS
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "trees/tree_kernels.h"

namespace rg::trees {
namespace {

using detail::kLanes;

// Levels evaluated by column compares + mask logic (Avx512Top / Avx2Top) when D >= this.
constexpr uint32_t kTopLevels = 4;

struct Scratch {
  std::vector<float> xt;      // slotWidth * kLanes staged values
  std::vector<float> acc;     // numGroups * kLanes accumulators
  std::vector<double> acc64;  // perfect64: numGroups * kLanes float64 accumulators
};

// Per-block accumulators: float32 (acc) for perfect models, float64 (acc64) for perfect64 ones.
struct Acc {
  float* f32;
  double* f64;
};

Scratch& ThreadScratch() {
  thread_local Scratch s;
  return s;
}

// Rows [0, nb) of the block -> xt[slot * 16 + lane].
void Stage(const Model& m, const float* rows, uint32_t nb, float* xt) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const uint32_t nf = m.numFeatures;
  const bool clamp = m.clampPositiveInfinity;
  for (uint32_t u = 0; u < m.numUsed; ++u) {
    uint32_t f = m.usedFeatures[u];
    if (f >= nf) f = 0;  // only a modified image can get here
    float* right = xt + size_t{2} * u * kLanes;
    float* left = right + kLanes;
    // Lanes >= nb keep whatever an earlier block staged (finite or ±inf, never NaN): kernels may
    // compute on them but their results are never written out.
    for (uint32_t r = 0; r < nb; ++r) {
      float x = rows[size_t{r} * nf + f];
      if (clamp && x == kInf) x = std::numeric_limits<float>::max();
      const bool missing = std::isnan(x);
      right[r] = missing ? kInf : x;
      left[r] = missing ? -kInf : x;
    }
  }
}

// NB rows x TI trees walked in lockstep: NB * TI independent dependency chains, so the core
// overlaps their load latencies. Leaves are added to the accumulators in tree order.
template <int NB, int TI, bool kWide>
void ScalarPerfectBlock(const Model& m, const float* xt, Acc acc) {
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
      uint32_t g = m.groups[t + k];
      if (g >= ng) g = 0;
      if constexpr (kWide) {
        const double* leaf = m.perfectLeaf64 + size_t{t + k} * S;
        double* a = acc.f64 + size_t{g} * kLanes;
        for (int r = 0; r < NB; ++r) a[r] += leaf[idx[k][r] - leafBase];
      } else {
        const float* leaf = tb + k * stride + 2 * size_t{S};
        float* a = acc.f32 + size_t{g} * kLanes;
        for (int r = 0; r < NB; ++r) a[r] += leaf[idx[k][r] - leafBase];
      }
    }
    t += kTi;
  };
  while (t + TI <= m.numTrees) run(std::integral_constant<int, TI>{});
  while (t < m.numTrees) run(std::integral_constant<int, 1>{});
}

template <bool kWide>
void ScalarPerfect(const Model& m, const float* xt, Acc acc, uint32_t nb) {
  // Trees interleaved per row count: measured best of {1,2,4,8,16} x {1,2,4,8,16} on t500_d6.
  if (nb <= 1) return ScalarPerfectBlock<1, 8, kWide>(m, xt, acc);
  if (nb <= 2) return ScalarPerfectBlock<2, 4, kWide>(m, xt, acc);
  if (nb <= 4) return ScalarPerfectBlock<4, 2, kWide>(m, xt, acc);
  if (nb <= 8) return ScalarPerfectBlock<8, 1, kWide>(m, xt, acc);
  return ScalarPerfectBlock<16, 1, kWide>(m, xt, acc);
}

#ifdef RG_HAVE_X86_KERNELS

// Path bits of up to 32 rows through levels 0-3 of a tree, from each of the 15 top nodes' "goes
// right" row masks c[n] (breadth-first order): bit r of b[l] is row r's decision at level l, picked
// with branch-free mask logic. Shared by the AVX2 and AVX-512 top-level kernels.
struct PathBits {
  uint32_t b0, b1, b2, b3;
};
__attribute__((always_inline)) inline PathBits TopPathBits(const uint32_t (&c)[15]) {
  auto mux = [](uint32_t sel, uint32_t a, uint32_t b) { return (sel & b) | (~sel & a); };
  const uint32_t b0 = c[0];
  const uint32_t b1 = mux(b0, c[1], c[2]);
  const uint32_t b2 = mux(b0, mux(b1, c[3], c[4]), mux(b1, c[5], c[6]));
  const uint32_t b3 = mux(b0, mux(b1, mux(b2, c[7], c[8]), mux(b2, c[9], c[10])),
                          mux(b1, mux(b2, c[11], c[12]), mux(b2, c[13], c[14])));
  return {b0, b1, b2, b3};
}

// AVX2 version of Avx512Top (levels 0-3 by column compares + mask logic), for 2 x 8 lanes:
// movemask gives the lane bits; the 4 path bits are expanded back to lanes at the end.
__attribute__((target("avx2"), always_inline)) inline void Avx2Top(const float* thr, const int* slot, const float* xt,
                                                                   uint32_t smask, __m256i& p0, __m256i& p1) {
  uint32_t c[15];
  for (int n = 0; n < 15; ++n) {
    const float* col = xt + size_t{static_cast<uint32_t>(slot[n]) & smask} * kLanes;
    const __m256 t = _mm256_set1_ps(thr[n]);
    const auto lo = static_cast<uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(col), t, _CMP_NLT_UQ)));
    const auto hi = static_cast<uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(col + 8), t, _CMP_NLT_UQ)));
    c[n] = lo | (hi << 8);
  }
  const auto [b0, b1, b2, b3] = TopPathBits(c);
  // Lane r of half h gets 8*b0[r] + 4*b1[r] + 2*b2[r] + b3[r] (bit index 8h + r).
  const __m256i bitsLo = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i bitsHi = _mm256_slli_epi32(bitsLo, 8);
  auto expand = [&](uint32_t b, __m256i bits, int weight) __attribute__((target("avx2"), always_inline)) {
    const __m256i v = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(b)), bits);
    return _mm256_and_si256(_mm256_cmpeq_epi32(v, bits), _mm256_set1_epi32(weight));
  };
  p0 = _mm256_add_epi32(_mm256_add_epi32(expand(b0, bitsLo, 8), expand(b1, bitsLo, 4)),
                        _mm256_add_epi32(expand(b2, bitsLo, 2), expand(b3, bitsLo, 1)));
  p1 = _mm256_add_epi32(_mm256_add_epi32(expand(b0, bitsHi, 8), expand(b1, bitsHi, 4)),
                        _mm256_add_epi32(expand(b2, bitsHi, 2), expand(b3, bitsHi, 1)));
}

// One level of one tree for 8 lanes (lane offsets `lane` into the 16-lane staging buffer).
__attribute__((target("avx2"), always_inline)) inline __m256i Avx2Level(const float* thr, const int* slot,
                                                                        const float* xt, __m256i p, uint32_t d,
                                                                        __m256i maskv, __m256i lane) {
  const uint32_t base = (1u << d) - 1;
  __m256 tv;
  __m256i sv;
  if (d <= 3) {
    tv = _mm256_permutevar8x32_ps(_mm256_loadu_ps(thr + base), p);
    sv = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(slot + base)), p);
  } else {
    const __m256i gi = _mm256_add_epi32(p, _mm256_set1_epi32(static_cast<int>(base)));
    tv = _mm256_i32gather_ps(thr, gi, 4);
    sv = _mm256_i32gather_epi32(slot, gi, 4);
  }
  const __m256i xi = _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(sv, maskv), 4), lane);
  const __m256 x = _mm256_i32gather_ps(xt, xi, 4);
  // all-ones (-1) where the row goes right: !(x < t)
  const __m256i right = _mm256_castps_si256(_mm256_cmp_ps(x, tv, _CMP_NLT_UQ));
  return _mm256_sub_epi32(_mm256_add_epi32(p, p), right);
}

__attribute__((target("avx2"), always_inline)) inline __m256 Avx2Leaf(const float* leaf, __m256i p, uint32_t D) {
  if (D <= 3) return _mm256_permutevar8x32_ps(_mm256_loadu_ps(leaf), p);
  return _mm256_i32gather_ps(leaf, p, 4);
}

// TI trees x 2 halves of 8 lanes interleaved; leaves added in tree order.
// Adds the float64 leaves of 8 lanes (leaf indices p) to a[0..8): two 4-wide gathers.
__attribute__((target("avx2"), always_inline)) inline void Avx2AddLeaf64(const double* leaf, __m256i p, double* a) {
  const __m256d lo = _mm256_i32gather_pd(leaf, _mm256_castsi256_si128(p), 8);
  const __m256d hi = _mm256_i32gather_pd(leaf, _mm256_extracti128_si256(p, 1), 8);
  _mm256_storeu_pd(a, _mm256_add_pd(_mm256_loadu_pd(a), lo));
  _mm256_storeu_pd(a + 4, _mm256_add_pd(_mm256_loadu_pd(a + 4), hi));
}

template <int TI, bool kWide>
__attribute__((target("avx2"))) void Avx2PerfectT(const Model& m, const float* xt, Acc acc) {
  const uint32_t D = m.depth;
  const uint32_t S = m.perfectS;
  const uint32_t ng = m.numGroups;
  const size_t stride = m.treeStride;
  const __m256i lane0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i lane1 = _mm256_add_epi32(lane0, _mm256_set1_epi32(8));
  const __m256i maskv = _mm256_set1_epi32(static_cast<int>(m.slotWidth - 1));
  const uint32_t smask = m.slotWidth - 1;
  uint32_t t = 0;
  auto run = [&](auto tiTag) __attribute__((target("avx2"))) {
    constexpr int kTi = decltype(tiTag)::value;
    const float* tb = m.perfectTrees + size_t{t} * stride;
    __m256i p0[kTi], p1[kTi];
    uint32_t d = 0;
    if (D >= kTopLevels) {
      for (int k = 0; k < kTi; ++k) {
        const float* thr = tb + k * stride;
        Avx2Top(thr, reinterpret_cast<const int*>(thr + S), xt, smask, p0[k], p1[k]);
      }
      d = kTopLevels;
    } else {
      for (int k = 0; k < kTi; ++k) p0[k] = p1[k] = _mm256_setzero_si256();
    }
    for (; d < D; ++d) {
      for (int k = 0; k < kTi; ++k) {
        const float* thr = tb + k * stride;
        const auto* slot = reinterpret_cast<const int*>(thr + S);
        p0[k] = Avx2Level(thr, slot, xt, p0[k], d, maskv, lane0);
        p1[k] = Avx2Level(thr, slot, xt, p1[k], d, maskv, lane1);
      }
    }
    for (int k = 0; k < kTi; ++k) {
      uint32_t g = m.groups[t + k];
      if (g >= ng) g = 0;
      if constexpr (kWide) {
        const double* leaf = m.perfectLeaf64 + size_t{t + k} * S;
        double* a = acc.f64 + size_t{g} * kLanes;
        Avx2AddLeaf64(leaf, p0[k], a);
        Avx2AddLeaf64(leaf, p1[k], a + 8);
      } else {
        const float* leaf = tb + k * stride + 2 * size_t{S};
        float* a = acc.f32 + size_t{g} * kLanes;
        _mm256_storeu_ps(a, _mm256_add_ps(_mm256_loadu_ps(a), Avx2Leaf(leaf, p0[k], D)));
        _mm256_storeu_ps(a + 8, _mm256_add_ps(_mm256_loadu_ps(a + 8), Avx2Leaf(leaf, p1[k], D)));
      }
    }
    t += kTi;
  };
  while (t + TI <= m.numTrees) run(std::integral_constant<int, TI>{});
  while (t < m.numTrees) run(std::integral_constant<int, 1>{});
}

template <bool kWide>
__attribute__((target("avx2"))) void Avx2Perfect(const Model& m, const float* xt, Acc acc) {
  Avx2PerfectT<4, kWide>(m, xt, acc);  // 4 trees interleaved: 1 -> 38.7 us, 2 -> 30.4, 4 -> 29.5 per 16 rows
}

// Levels whose feature values are picked by loads + blends rather than a gather.
// (Only trees shallower than kTopLevels use this per-level path for their first levels.)
constexpr uint32_t kAvx512BlendLevels = 2;

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
    x = _mm512_i32gather_ps(xi, xt, 4);
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

// Levels 0-3 of one tree for 16 lanes without gathers or permutes: the 15 nodes' feature
// columns are loaded whole (16 contiguous lanes) and compared with their broadcast thresholds,
// giving one 16-bit lane mask per node; the path bits are then picked with scalar mask logic.
// Returns the local index at level 4 (8*b0 + 4*b1 + 2*b2 + b3). Needs D >= kTopLevels.

__attribute__((target("avx512f"), always_inline)) inline __m512i Avx512Top(const float* thr, const int* slot,
                                                                           const float* xt, uint32_t smask) {
  uint32_t c[15];  // bit r of c[n]: row r goes right at node n
  for (int n = 0; n < 15; ++n) {
    const __m512 x = _mm512_loadu_ps(xt + size_t{static_cast<uint32_t>(slot[n]) & smask} * kLanes);
    c[n] = static_cast<uint32_t>(_mm512_cmp_ps_mask(x, _mm512_set1_ps(thr[n]), _CMP_NLT_UQ));
  }
  const auto [b0, b1, b2, b3] = TopPathBits(c);
  __m512i p = _mm512_maskz_mov_epi32(static_cast<__mmask16>(b0), _mm512_set1_epi32(8));
  p = _mm512_mask_add_epi32(p, static_cast<__mmask16>(b1), p, _mm512_set1_epi32(4));
  p = _mm512_mask_add_epi32(p, static_cast<__mmask16>(b2), p, _mm512_set1_epi32(2));
  return _mm512_mask_add_epi32(p, static_cast<__mmask16>(b3), p, _mm512_set1_epi32(1));
}

// TI trees interleaved (independent chains); leaves added in tree order.
// Adds the float64 leaves of 16 lanes (leaf indices p) to a[0..16): two 8-wide gathers.
__attribute__((target("avx512f"), always_inline)) inline void Avx512AddLeaf64(const double* leaf, __m512i p,
                                                                              double* a) {
  const __m512d lo = _mm512_i32gather_pd(_mm512_castsi512_si256(p), leaf, 8);
  const __m512d hi = _mm512_i32gather_pd(_mm512_extracti64x4_epi64(p, 1), leaf, 8);
  _mm512_storeu_pd(a, _mm512_add_pd(_mm512_loadu_pd(a), lo));
  _mm512_storeu_pd(a + 8, _mm512_add_pd(_mm512_loadu_pd(a + 8), hi));
}

template <int TI, bool kWide>
__attribute__((target("avx512f"))) void Avx512PerfectT(const Model& m, const float* xt, Acc acc) {
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
    if (D >= kTopLevels) {
      for (int k = 0; k < kTi; ++k) {
        const float* thr = tb + k * stride;
        p[k] = Avx512Top(thr, reinterpret_cast<const int*>(thr + S), xt, smask);
      }
      d = kTopLevels;
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
      uint32_t g = m.groups[t + k];
      if (g >= ng) g = 0;
      if constexpr (kWide) {
        Avx512AddLeaf64(m.perfectLeaf64 + size_t{t + k} * S, p[k], acc.f64 + size_t{g} * kLanes);
      } else {
        const __m512 lv = Avx512Leaf(tb + k * stride + 2 * size_t{S}, p[k], D);
        float* a = acc.f32 + size_t{g} * kLanes;
        _mm512_storeu_ps(a, _mm512_add_ps(_mm512_loadu_ps(a), lv));
      }
    }
    t += kTi;
  };
  while (t + TI <= m.numTrees) run(std::integral_constant<int, TI>{});
  while (t < m.numTrees) run(std::integral_constant<int, 1>{});
}

template <bool kWide>
__attribute__((target("avx512f"))) void Avx512Perfect(const Model& m, const float* xt, Acc acc) {
  Avx512PerfectT<4, kWide>(m, xt, acc);  // 4 trees interleaved: 1 -> 36 us, 2/4 -> 25 us per 16 rows
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

// Out = float: float32 margins of a perfect model. Out = double: float64 margins of a perfect64
// model (float64 leaves and sums).
template <typename Out>
void PredictPerfect(const Model& m, const float* rows, size_t nRows, Out* out, KernelChoice kernel) {
  constexpr bool kWide = std::is_same_v<Out, double>;
  Scratch& s = ThreadScratch();
  const size_t xtSize = size_t{m.slotWidth} * kLanes;
  if (s.xt.size() < xtSize) s.xt.resize(xtSize, 0.f);
  const size_t accSize = size_t{m.numGroups} * kLanes;
  std::vector<Out>& accStore = [&]() -> std::vector<Out>& {
    if constexpr (kWide) {
      return s.acc64;
    } else {
      return s.acc;
    }
  }();
  if (accStore.size() < accSize) accStore.resize(accSize);
  float* xt = s.xt.data();
  Out* acc = accStore.data();
  Acc accs{};
  if constexpr (kWide) {
    accs.f64 = acc;
  } else {
    accs.f32 = acc;
  }
  const uint32_t ng = m.numGroups;
  const uint32_t nf = m.numFeatures;
  // The scalar kernel is fastest per row with 4 rows x 2 trees in lockstep (3.4 us/row on t500_d6
  // vs 4.4 with 16 rows), so without SIMD rows go 4 at a time.
  const uint32_t blockRows = kernel == KernelChoice::kScalar ? 4 : kLanes;
  for (size_t r0 = 0; r0 < nRows; r0 += blockRows) {
    const auto nb = static_cast<uint32_t>(std::min<size_t>(blockRows, nRows - r0));
    Stage(m, rows + r0 * nf, nb, xt);
    std::fill(acc, acc + accSize, static_cast<Out>(m.baseMargin));
    KernelChoice k = kernel;
    if ((k == KernelChoice::kAvx512 && nb < kAvx512MinRows) || (k == KernelChoice::kAvx2 && nb < kAvx2MinRows)) {
      k = KernelChoice::kScalar;
    }
#ifdef RG_HAVE_X86_KERNELS
    if (k == KernelChoice::kAvx512) {
      Avx512Perfect<kWide>(m, xt, accs);
    } else if (k == KernelChoice::kAvx2) {
      Avx2Perfect<kWide>(m, xt, accs);
    } else {
      ScalarPerfect<kWide>(m, xt, accs, nb);
    }
#else
    ScalarPerfect<kWide>(m, xt, accs, nb);
#endif
    Out* o = out + r0 * ng;  // acc lanes >= nb are never copied out
    for (uint32_t r = 0; r < nb; ++r) {
      for (uint32_t g = 0; g < ng; ++g) o[size_t{r} * ng + g] = acc[size_t{g} * kLanes + r];
    }
  }
}

// Deep or unusual trees: node-by-node walk with explicit NaN handling. Indices, features and
// the number of steps are bounded so a modified image cannot read out of range or loop.
// Acc = float: XGBoost's float32 sum of float32 leaves. Acc = double on a generic64 model: the
// float64 leaves summed in float64 (LightGBM); on other layouts, the float32 leaves widened.
template <typename Acc>
void PredictGeneric(const Model& m, const float* rows, size_t nRows, Acc* out) {
  const uint32_t ng = m.numGroups;
  const uint32_t nf = m.numFeatures;
  const uint32_t total = m.totalNodes;
  const double* leaf64 = m.layout == Layout::kGeneric64 ? m.leaf64 : nullptr;
  const bool clamp = m.clampPositiveInfinity;
  for (size_t r = 0; r < nRows; ++r) {
    const float* x = rows + r * nf;
    Acc* o = out + r * ng;
    for (uint32_t g = 0; g < ng; ++g) o[g] = static_cast<Acc>(m.baseMargin);
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
        float v = f < nf ? x[f] : std::numeric_limits<float>::quiet_NaN();
        if (clamp && v == std::numeric_limits<float>::infinity()) v = std::numeric_limits<float>::max();
        const bool left = std::isnan(v) ? dl[i] != 0 : v < nd.value;
        const auto next = static_cast<uint32_t>(left ? nd.left : nd.right);
        i = next < n ? next : 0;
      }
      uint32_t g = m.groups[t];
      if (g >= ng) g = 0;
      if (nodes[i].left < 0) {
        o[g] += leaf64 != nullptr ? static_cast<Acc>(leaf64[begin + i]) : static_cast<Acc>(nodes[i].value);
      }
    }
  }
}

}  // namespace

void PredictMargin(const Model& m, const float* rows, size_t nRows, float* out, KernelChoice kernel) {
  if (nRows == 0) return;
  if (m.layout == Layout::kGeneric || m.layout == Layout::kGeneric64) {
    PredictGeneric<float>(m, rows, nRows, out);
  } else {
    // Perfect64 here sums its float32-rounded leaves in float32, like PredictGeneric<float> on
    // a generic64 model; its exact margins come from PredictMargin64.
    PredictPerfect(m, rows, nRows, out, Resolve(kernel));
  }
}

void PredictMargin64(const Model& m, const float* rows, size_t nRows, double* out, KernelChoice kernel) {
  if (nRows == 0) return;
  if (m.layout == Layout::kGeneric || m.layout == Layout::kGeneric64) {
    PredictGeneric<double>(m, rows, nRows, out);
    return;
  }
  if (m.layout == Layout::kPerfect64) {
    PredictPerfect(m, rows, nRows, out, Resolve(kernel));
    return;
  }
  // Perfect layout: XGBoost's float32 margins, widened (exact).
  const size_t n = nRows * m.numGroups;
  std::vector<float> margins(n);
  PredictPerfect(m, rows, nRows, margins.data(), Resolve(kernel));
  for (size_t i = 0; i < n; ++i) out[i] = margins[i];
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
