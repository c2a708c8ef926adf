// Measurement, not a shipped path: the per-pair work of the latent cosine (docs/eval.md, "Latent
// semantics from the corpus") in C++, on a dump of research/loco/lsi-cost.ts --dump, with the addon's
// optimisation flags and baseline x86-64 target (what prebuilt binaries run). The passages' tokens come
// already resolved to rows of U, as the extractor's term cache would hand them over, so the timed part
// is what the feature adds to the extractor: term counts, (1 + ln tf) x idf weights, rank multiply-adds
// per distinct term, the length and one dot product with the query's vector. The run fails unless every
// cosine equals research/loco/corpus-lsi.ts's (the code loco-base.ts trains with) within 1e-5.
//
// Dump layout (little-endian): int32 rank, terms, lists; float32 U[terms * rank]; float64 idf[terms];
// per list: int32 passages, float32 query[rank]; per passage: int32 tokens, int32 rows[tokens] (-1: not in
// U), float64 reference cosine.
//
// Usage: research/lsi-native/run.sh DUMP [rounds]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Passage {
  std::vector<int32_t> rows;
  double reference;
};

struct List {
  std::vector<float> query;
  std::vector<Passage> passages;
};

class Reader {
 public:
  explicit Reader(const char* path) : in_(path, std::ios::binary) {
    if (!in_) throw std::runtime_error(std::string("cannot open ") + path);
  }
  template <typename T>
  T One() {
    T v;
    Many(&v, 1);
    return v;
  }
  template <typename T>
  void Many(T* out, size_t n) {
    in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n * sizeof(T)));
    if (!in_) throw std::runtime_error("dump is truncated");
  }
  bool AtEnd() { return in_.peek() == std::char_traits<char>::eof(); }

 private:
  std::ifstream in_;
};

// Scratch a native pass would keep per thread: term counts by row, the distinct rows, the accumulator.
class LatentCosine {
 public:
  LatentCosine(const std::vector<float>& basis, const std::vector<double>& idf, int32_t rank)
      : basis_(basis), idf_(idf), rank_(rank), tf_(idf.size(), 0), acc_(static_cast<size_t>(rank)) {
    // 1 + ln tf for the counts nearly every term has, looked up instead of a log call per term.
    for (uint32_t tf = 1; tf < kTfTable; tf++) log_tf_[tf] = 1.0 + std::log(static_cast<double>(tf));
  }

  double operator()(const std::vector<int32_t>& rows, const float* query) {
    distinct_.clear();
    for (int32_t r : rows) {
      if (r < 0) continue;
      if (tf_[static_cast<size_t>(r)]++ == 0) distinct_.push_back(r);
    }
    std::fill(acc_.begin(), acc_.end(), 0.0f);
    bool any = false;
    for (int32_t r : distinct_) {
      const auto row = static_cast<size_t>(r);
      const uint32_t tf = tf_[row];
      const double w = (tf < kTfTable ? log_tf_[tf] : 1.0 + std::log(static_cast<double>(tf))) * idf_[row];
      tf_[row] = 0;
      if (w <= 0) continue;
      any = true;
      const float wf = static_cast<float>(w);
      const float* u = basis_.data() + row * static_cast<size_t>(rank_);
      float* acc = acc_.data();
      for (int32_t c = 0; c < rank_; c++) acc[c] += wf * u[c];
    }
    if (!any) return 0;
    float length = 0;
    float dot = 0;
    for (int32_t c = 0; c < rank_; c++) {
      length += acc_[static_cast<size_t>(c)] * acc_[static_cast<size_t>(c)];
      dot += acc_[static_cast<size_t>(c)] * query[c];
    }
    return length > 0 ? dot / std::sqrt(static_cast<double>(length)) : 0;
  }

 private:
  static constexpr uint32_t kTfTable = 64;
  double log_tf_[kTfTable] = {};
  const std::vector<float>& basis_;
  const std::vector<double>& idf_;
  const int32_t rank_;
  std::vector<uint32_t> tf_;
  std::vector<int32_t> distinct_;
  std::vector<float> acc_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fold_in DUMP [rounds]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  try {
    Reader in(argv[1]);
    const auto rank = in.One<int32_t>();
    const auto terms = in.One<int32_t>();
    const auto list_count = in.One<int32_t>();
    if (rank < 1 || rank > 4096 || terms < 1 || list_count < 0) throw std::runtime_error("bad header");
    std::vector<float> basis(static_cast<size_t>(terms) * static_cast<size_t>(rank));
    in.Many(basis.data(), basis.size());
    std::vector<double> idf(static_cast<size_t>(terms));
    in.Many(idf.data(), idf.size());
    std::vector<List> lists(static_cast<size_t>(list_count));
    size_t pairs = 0;
    size_t tokens = 0;
    for (List& l : lists) {
      const auto n = in.One<int32_t>();
      if (n < 0) throw std::runtime_error("bad list length");
      l.query.resize(static_cast<size_t>(rank));
      in.Many(l.query.data(), l.query.size());
      l.passages.resize(static_cast<size_t>(n));
      for (Passage& p : l.passages) {
        const auto t = in.One<int32_t>();
        if (t < 0) throw std::runtime_error("bad passage length");
        p.rows.resize(static_cast<size_t>(t));
        in.Many(p.rows.data(), p.rows.size());
        for (int32_t r : p.rows)
          if (r < -1 || r >= terms) throw std::runtime_error("row out of range");
        p.reference = in.One<double>();
        tokens += p.rows.size();
      }
      pairs += l.passages.size();
    }
    if (!in.AtEnd()) throw std::runtime_error("trailing bytes after the last list");

    LatentCosine cosine(basis, idf, rank);
    double worst = 0;
    for (const List& l : lists)
      for (const Passage& p : l.passages)
        worst = std::max(worst, std::fabs(cosine(p.rows, l.query.data()) - p.reference));
    if (!(worst <= 1e-5)) {
      std::fprintf(stderr, "cosines differ from research/loco/corpus-lsi.ts by up to %g\n", worst);
      return 1;
    }
    std::vector<double> times;
    double checksum = 0;
    for (int round = 0; round < rounds; round++) {
      const auto t0 = std::chrono::steady_clock::now();
      for (const List& l : lists)
        for (const Passage& p : l.passages) checksum += cosine(p.rows, l.query.data());
      const std::chrono::duration<double, std::micro> spent = std::chrono::steady_clock::now() - t0;
      times.push_back(spent.count() / static_cast<double>(pairs));
    }
    std::sort(times.begin(), times.end());
    std::printf(
        "rank %d, %d terms, %zu lists, %zu pairs, %.1f tokens/passage; cosines equal corpus-lsi.ts within %.1e\n", rank,
        terms, lists.size(), pairs, static_cast<double>(tokens) / static_cast<double>(pairs), worst);
    std::printf("latent cosine (C++, token rows given): %.3f us/pair (median of %d rounds; checksum %.3f)\n",
                times[times.size() / 2], rounds, checksum);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fold_in: %s\n", e.what());
    return 1;
  }
  return 0;
}
