// JS surface of the lexical feature extractor. Every argument is validated here (types, sizes)
// because a malformed call must throw, never crash; the TypeScript wrapper (src/features/)
// validates first and turns these errors into typed ones.
#include "features/features_binding.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "features/corpus_stats.h"
#include "features/extractor.h"
#include "features/term_hash.h"
#include "features/terms.h"
#include "features/tokenizer_version.h"

namespace rg::features {
namespace {

// Tags that identify our wrapped objects (napi_type_tag), so a foreign object passed in their
// place is rejected instead of being unwrapped as the wrong type.
constexpr napi_type_tag kStatsTag = {0x7a3c1e5b9d2f4a61ull, 0x8e4b2c6d1f3a5b79ull};

[[noreturn]] void ThrowType(Napi::Env env, const std::string& msg) { throw Napi::TypeError::New(env, msg); }
[[noreturn]] void ThrowRange(Napi::Env env, const std::string& msg) { throw Napi::RangeError::New(env, msg); }

// A view of a text argument: a JS string (copied into a thread-local buffer as UTF-8) or the
// bytes of a Uint8Array/Buffer (used in place; may hold invalid UTF-8).
struct TextView {
  const char* data = nullptr;
  size_t size = 0;
};

// Scratch buffers are thread-local and reused; one that a huge input grew is given back so a
// single 100 MB passage does not pin 300 MB for the life of the thread.
template <typename Str>
void ReleaseIfHuge(Str& buf) {
  constexpr size_t kKeep = 8u << 20;
  if (buf.capacity() * sizeof(typename Str::value_type) > kKeep) Str().swap(buf);
}

// UTF-8 encoding of in[0..n) into out (room for 3 bytes per unit); returns the byte count.
// Unpaired surrogates are encoded as U+FFFD.
size_t Utf16ToUtf8(const char16_t* in, size_t n, char* out) {
  size_t i = 0;
  char* o = out;
  while (i < n) {
#if defined(__SSE2__)
    const __m128i high = _mm_set1_epi16(static_cast<short>(0xFF80));
    const __m128i zero = _mm_setzero_si128();
    while (i + 16 <= n) {  // 16 ASCII units at a time
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 8));
      // Stores 16 bytes even when fewer are ASCII (room: 3 bytes per unit left, and 16 units left);
      // only the ASCII prefix is kept, the rest is overwritten below.
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_packus_epi16(a, b));
      if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(_mm_or_si128(a, b), high), zero)) != 0xFFFF) {
        const unsigned ascii_a =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(a, high), zero)));
        const unsigned ascii_b =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(b, high), zero)));
        const unsigned ascii = ascii_a | (ascii_b << 16);                     // two bits per unit
        const unsigned k = static_cast<unsigned>(__builtin_ctz(~ascii)) / 2;  // first non-ASCII unit
        o += k;
        i += k;
        break;
      }
      o += 16;
      i += 16;
    }
    if (i >= n) break;
#endif
    const uint32_t c = in[i];
    if (c < 0x80) {
      *o++ = static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t cp = c;
    size_t used = 1;
    if (c >= 0xD800 && c <= 0xDFFF) {
      const uint32_t d = i + 1 < n ? in[i + 1] : 0;
      if (c <= 0xDBFF && d >= 0xDC00 && d <= 0xDFFF) {
        cp = 0x10000 + ((c - 0xD800) << 10) + (d - 0xDC00);
        used = 2;
      } else {
        cp = 0xFFFD;
      }
    }
    if (cp < 0x800) {
      *o++ = static_cast<char>(0xC0 | (cp >> 6));
      *o++ = static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *o++ = static_cast<char>(0xE0 | (cp >> 12));
      *o++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *o++ = static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *o++ = static_cast<char>(0xF0 | (cp >> 18));
      *o++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *o++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *o++ = static_cast<char>(0x80 | (cp & 0x3F));
    }
    i += used;
  }
  return static_cast<size_t>(o - out);
}

// Reads a string or Uint8Array into buf (strings) or a view of the array's bytes.
TextView ReadText(Napi::Env env, Napi::Value v, std::string& buf, const char* what) {
  if (v.IsString()) {
    size_t units = 0;
    napi_status st = napi_get_value_string_utf16(env, v, nullptr, 0, &units);
    if (st != napi_ok) ThrowType(env, std::string(what) + ": could not read string");
    // Each UTF-16 unit encodes to at most 3 UTF-8 bytes (a surrogate pair: 4 bytes for 2 units).
    const size_t need = units * 3 + 1;
    if (buf.size() < need) buf.resize(need);
    // The UTF-16 copy is a plain (widening) copy inside V8; encoding it here with an ASCII fast
    // path is several times cheaper than V8's WriteUtf8, with the same bytes (lone surrogates
    // become U+FFFD, as napi_get_value_string_utf8 does).
    thread_local std::u16string units_buf;
    if (units_buf.size() < units + 1) units_buf.resize(units + 1);
    size_t copied = 0;
    st = napi_get_value_string_utf16(env, v, units_buf.data(), units + 1, &copied);
    if (st != napi_ok || copied != units) ThrowType(env, std::string(what) + ": could not read string");
    const size_t bytes = Utf16ToUtf8(units_buf.data(), units, buf.data());
    ReleaseIfHuge(units_buf);
    return TextView{buf.data(), bytes};
  }
  if (v.IsTypedArray()) {
    Napi::TypedArray ta = v.As<Napi::TypedArray>();
    if (ta.TypedArrayType() != napi_uint8_array) ThrowType(env, std::string(what) + " must be a string or Uint8Array");
    Napi::Uint8Array u8 = v.As<Napi::Uint8Array>();
    return TextView{reinterpret_cast<const char*>(u8.Data()), u8.ElementLength()};
  }
  ThrowType(env, std::string(what) + " must be a string or Uint8Array");
}

std::string CopyText(Napi::Env env, Napi::Value v, const char* what) {
  std::string buf;
  TextView t = ReadText(env, v, buf, what);
  return std::string(t.data, t.size);
}

// ---------------------------------------------------------------------------------------------
// FeatureCorpusStats: the loaded statistics (immutable).
class StatsWrap : public Napi::ObjectWrap<StatsWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "FeatureCorpusStats",
        {InstanceMethod<&StatsWrap::Lookup>("lookup"), InstanceAccessor<&StatsWrap::Size>("size"),
         InstanceAccessor<&StatsWrap::DocCount>("docCount"), InstanceAccessor<&StatsWrap::AvgBody>("avgBodyLength"),
         InstanceAccessor<&StatsWrap::AvgTitle>("avgTitleLength")});
  }

  // new FeatureCorpusStats(terms: string ("\n"-joined), dfBody, dfTitle, dfAny: Uint32Array,
  //                        docCount: number, avgBodyLength: number, avgTitleLength: number)
  explicit StatsWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<StatsWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() != 7) ThrowType(env, "FeatureCorpusStats: expected 7 arguments");
    if (!info[0].IsString()) ThrowType(env, "FeatureCorpusStats: terms must be a string");
    Napi::Uint32Array dfs[3];
    for (int i = 0; i < 3; ++i) {
      Napi::Value v = info[static_cast<size_t>(1 + i)];
      if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array) {
        ThrowType(env, "FeatureCorpusStats: document frequencies must be Uint32Arrays");
      }
      dfs[i] = v.As<Napi::Uint32Array>();
    }
    for (int i = 4; i < 7; ++i) {
      if (!info[static_cast<size_t>(i)].IsNumber()) ThrowType(env, "FeatureCorpusStats: counts must be numbers");
    }
    const double doc_count = info[4].As<Napi::Number>().DoubleValue();
    const double avg_body = info[5].As<Napi::Number>().DoubleValue();
    const double avg_title = info[6].As<Napi::Number>().DoubleValue();
    if (!std::isfinite(doc_count) || doc_count < 0 || doc_count != std::floor(doc_count) || doc_count > 9.0e15) {
      ThrowRange(env, "FeatureCorpusStats: docCount must be a non-negative integer");
    }
    if (!std::isfinite(avg_body) || avg_body < 0 || !std::isfinite(avg_title) || avg_title < 0) {
      ThrowRange(env, "FeatureCorpusStats: average lengths must be finite and >= 0");
    }
    const size_t n = dfs[0].ElementLength();
    if (dfs[1].ElementLength() != n || dfs[2].ElementLength() != n) {
      ThrowRange(env, "FeatureCorpusStats: document-frequency arrays differ in length");
    }
    const std::string terms = info[0].As<Napi::String>().Utf8Value();
    stats_ = std::make_unique<CorpusStats>(static_cast<uint64_t>(doc_count), avg_body, avg_title, n);
    size_t start = 0;
    size_t count = 0;
    if (n > 0) {
      while (true) {
        size_t end = terms.find('\n', start);
        if (end == std::string::npos) end = terms.size();
        if (count >= n) ThrowRange(env, "FeatureCorpusStats: more terms than document frequencies");
        if (end == start) ThrowRange(env, "FeatureCorpusStats: empty term");
        stats_->Insert(HashTerm(terms.data() + start, end - start),
                       TermDf{dfs[0][count], dfs[1][count], dfs[2][count]});
        ++count;
        if (end == terms.size()) break;
        start = end + 1;
      }
    } else if (!terms.empty()) {
      ThrowRange(env, "FeatureCorpusStats: more terms than document frequencies");
    }
    if (count != n) ThrowRange(env, "FeatureCorpusStats: fewer terms than document frequencies");
    Napi::Object self = info.This().As<Napi::Object>();
    self.TypeTag(&kStatsTag);
  }

  const CorpusStats& stats() const { return *stats_; }

  static StatsWrap* FromValue(Napi::Env env, Napi::Value v) {
    if (!v.IsObject()) ThrowType(env, "stats must be a FeatureCorpusStats");
    Napi::Object o = v.As<Napi::Object>();
    if (!o.CheckTypeTag(&kStatsTag)) ThrowType(env, "stats must be a FeatureCorpusStats");
    return Unwrap(o);
  }

 private:
  // lookup(term: string): [dfBody, dfTitle, dfAny] of an already-normalised term.
  Napi::Value Lookup(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) ThrowType(env, "lookup: term must be a string");
    const std::string t = info[0].As<Napi::String>().Utf8Value();
    const TermDf df = stats_->Lookup(HashTerm(t.data(), t.size()));
    Napi::Array out = Napi::Array::New(env, 3);
    out.Set(0u, Napi::Number::New(env, df.body));
    out.Set(1u, Napi::Number::New(env, df.title));
    out.Set(2u, Napi::Number::New(env, df.any));
    return out;
  }
  Napi::Value Size(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(stats_->size()));
  }
  Napi::Value DocCount(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(stats_->doc_count()));
  }
  Napi::Value AvgBody(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), stats_->avg_body_len()); }
  Napi::Value AvgTitle(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), stats_->avg_title_len());
  }

  std::unique_ptr<CorpusStats> stats_;
};

// ---------------------------------------------------------------------------------------------
// FeatureCorpusStatsBuilder: counts document frequencies document by document.
class BuilderWrap : public Napi::ObjectWrap<BuilderWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "FeatureCorpusStatsBuilder",
                       {InstanceMethod<&BuilderWrap::Add>("add"), InstanceMethod<&BuilderWrap::Finish>("finish"),
                        InstanceAccessor<&BuilderWrap::DocCount>("docCount")});
  }
  explicit BuilderWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<BuilderWrap>(info) {}

 private:
  // add(title: string | Uint8Array, text: string | Uint8Array)
  Napi::Value Add(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (builder_ == nullptr) ThrowType(env, "FeatureCorpusStatsBuilder: finish() was already called");
    if (info.Length() != 2) ThrowType(env, "add: expected (title, text)");
    TextView title = ReadText(env, info[0], title_buf_, "add: title");
    TextView text = ReadText(env, info[1], text_buf_, "add: text");
    builder_->AddDocument(title.data, title.size, text.data, text.size);
    return env.Undefined();
  }
  // finish(): { terms, dfBody, dfTitle, dfAny, docCount, totalBodyLength, totalTitleLength }
  Napi::Value Finish(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (builder_ == nullptr) ThrowType(env, "FeatureCorpusStatsBuilder: finish() was already called");
    const auto& entries = builder_->entries();
    std::string terms;
    size_t bytes = 0;
    for (const auto& e : entries) bytes += e.term.size() + 1;
    terms.reserve(bytes);
    Napi::Uint32Array body = Napi::Uint32Array::New(env, entries.size());
    Napi::Uint32Array title = Napi::Uint32Array::New(env, entries.size());
    Napi::Uint32Array any = Napi::Uint32Array::New(env, entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) terms.push_back('\n');
      terms += entries[i].term;
      body[i] = entries[i].df.body;
      title[i] = entries[i].df.title;
      any[i] = entries[i].df.any;
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("terms", Napi::String::New(env, terms));
    out.Set("dfBody", body);
    out.Set("dfTitle", title);
    out.Set("dfAny", any);
    out.Set("docCount", Napi::Number::New(env, static_cast<double>(builder_->doc_count())));
    out.Set("totalBodyLength", Napi::Number::New(env, static_cast<double>(builder_->total_body_len())));
    out.Set("totalTitleLength", Napi::Number::New(env, static_cast<double>(builder_->total_title_len())));
    builder_.reset();
    return out;
  }
  Napi::Value DocCount(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), builder_ ? static_cast<double>(builder_->doc_count()) : 0.0);
  }

  std::unique_ptr<CorpusStatsBuilder> builder_ = std::make_unique<CorpusStatsBuilder>();
  std::string title_buf_;
  std::string text_buf_;
};

// ---------------------------------------------------------------------------------------------
// tokenize(text: string | Uint8Array): string[]
Napi::Value Tokenize(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1) ThrowType(env, "tokenize: expected one argument");
  thread_local std::string buf;
  thread_local std::string scratch;
  thread_local std::string term;
  TextView t = ReadText(env, info[0], buf, "tokenize: text");
  std::vector<std::string> terms;
  ForEachTerm(t.data, t.size, scratch, term, [&](const char* p, size_t n) { terms.emplace_back(p, n); });
  ReleaseIfHuge(buf);
  ReleaseIfHuge(scratch);
  Napi::Array out = Napi::Array::New(env, terms.size());
  for (size_t i = 0; i < terms.size(); ++i) out.Set(static_cast<uint32_t>(i), Napi::String::New(env, terms[i]));
  return out;
}

// Validated arguments of an extraction call.
struct ExtractArgs {
  StatsWrap* stats = nullptr;
  Napi::Value query;
  Napi::Array titles;  // empty when no titles were given
  bool has_titles = false;
  Napi::Array texts;
  uint32_t k = 0;
  const float* passthrough = nullptr;
};

// (stats, query: string|Uint8Array, titles: Array<string|Uint8Array|undefined|null> | null,
//  texts: Array<string|Uint8Array>, passthrough: Float32Array(k * 3) | null)
ExtractArgs ParseExtractArgs(const Napi::CallbackInfo& info, const char* fn) {
  Napi::Env env = info.Env();
  const std::string f(fn);
  if (info.Length() != 5) ThrowType(env, f + ": expected (stats, query, titles, texts, passthrough)");
  ExtractArgs a;
  a.stats = StatsWrap::FromValue(env, info[0]);
  if (!info[1].IsString() && !info[1].IsTypedArray()) ThrowType(env, f + ": query must be a string or Uint8Array");
  a.query = info[1];
  if (!info[3].IsArray()) ThrowType(env, f + ": texts must be an array");
  a.texts = info[3].As<Napi::Array>();
  a.k = a.texts.Length();
  if (!info[2].IsNull() && !info[2].IsUndefined()) {
    if (!info[2].IsArray()) ThrowType(env, f + ": titles must be an array or null");
    a.titles = info[2].As<Napi::Array>();
    a.has_titles = true;
    if (a.titles.Length() != a.k) ThrowRange(env, f + ": titles and texts differ in length");
  }
  if (!info[4].IsNull() && !info[4].IsUndefined()) {
    if (!info[4].IsTypedArray() || info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
      ThrowType(env, f + ": passthrough must be a Float32Array or null");
    }
    Napi::Float32Array pt = info[4].As<Napi::Float32Array>();
    if (pt.ElementLength() != static_cast<size_t>(a.k) * kNumPassthrough) {
      ThrowRange(env, f + ": passthrough must hold " + std::to_string(kNumPassthrough) + " values per passage");
    }
    a.passthrough = pt.Data();
  }
  return a;
}

bool IsMissing(const Napi::Value& v) { return v.IsUndefined() || v.IsNull(); }

// extract(...) -> Float32Array(k * numFeatures), row-major (one row per passage).
Napi::Value Extract(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ExtractArgs a = ParseExtractArgs(info, "extract");
  thread_local std::string query_buf, title_buf, text_buf;
  thread_local ExtractScratch scratch;
  TextView q = ReadText(env, a.query, query_buf, "extract: query");
  const CorpusStats& stats = a.stats->stats();
  QueryPlan plan(stats, q.data, q.size);
  Napi::Float32Array out = Napi::Float32Array::New(env, static_cast<size_t>(a.k) * kNumFeatures);
  float* dst = out.Data();
  for (uint32_t i = 0; i < a.k; ++i) {
    TextView title{};
    if (a.has_titles) {
      Napi::Value tv = a.titles.Get(i);
      if (!IsMissing(tv)) title = ReadText(env, tv, title_buf, "extract: title");
    }
    TextView text = ReadText(env, a.texts.Get(i), text_buf, "extract: text");
    ExtractFeatures(stats, plan, PassageText{title.data, title.size, text.data, text.size},
                    a.passthrough != nullptr ? a.passthrough + static_cast<size_t>(i) * kNumPassthrough : nullptr,
                    dst + static_cast<size_t>(i) * kNumFeatures, scratch);
  }
  ReleaseIfHuge(query_buf);
  ReleaseIfHuge(title_buf);
  ReleaseIfHuge(text_buf);
  ReleaseIfHuge(scratch.token);
  if (scratch.matches.capacity() > (1u << 20)) std::vector<ExtractScratch::Match>().swap(scratch.matches);
  return out;
}

// The same computation on a libuv worker thread, for big batches.
class ExtractWorker : public Napi::AsyncWorker {
 public:
  ExtractWorker(Napi::Env env, Napi::Object stats_obj, const CorpusStats& stats)
      : Napi::AsyncWorker(env, "relevance-gate:features-extract"),
        deferred_(Napi::Promise::Deferred::New(env)),
        stats_ref_(Napi::Persistent(stats_obj)),
        stats_(stats) {}

  std::string query;
  std::vector<std::string> titles;
  std::vector<std::string> texts;
  std::vector<float> passthrough;

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    out_.resize(texts.size() * kNumFeatures);
    ExtractScratch scratch;
    QueryPlan plan(stats_, query.data(), query.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string& title = titles[i];
      ExtractFeatures(stats_, plan, PassageText{title.data(), title.size(), texts[i].data(), texts[i].size()},
                      passthrough.empty() ? nullptr : passthrough.data() + i * kNumPassthrough,
                      out_.data() + i * kNumFeatures, scratch);
    }
  }
  void OnOK() override {
    Napi::Env env = Env();
    Napi::Float32Array arr = Napi::Float32Array::New(env, out_.size());
    if (!out_.empty()) std::memcpy(arr.Data(), out_.data(), out_.size() * sizeof(float));
    deferred_.Resolve(arr);
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference stats_ref_;  // keeps the statistics alive while the worker runs
  const CorpusStats& stats_;
  std::vector<float> out_;
};

Napi::Value ExtractAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ExtractArgs a = ParseExtractArgs(info, "extractAsync");
  auto* worker = new ExtractWorker(env, info[0].As<Napi::Object>(), a.stats->stats());
  try {
    worker->query = CopyText(env, a.query, "extractAsync: query");
    worker->titles.resize(a.k);
    worker->texts.resize(a.k);
    for (uint32_t i = 0; i < a.k; ++i) {
      if (a.has_titles) {
        Napi::Value tv = a.titles.Get(i);
        if (!IsMissing(tv)) worker->titles[i] = CopyText(env, tv, "extractAsync: title");
      }
      worker->texts[i] = CopyText(env, a.texts.Get(i), "extractAsync: text");
    }
    if (a.passthrough != nullptr) {
      worker->passthrough.assign(a.passthrough, a.passthrough + static_cast<size_t>(a.k) * kNumPassthrough);
    }
  } catch (...) {
    delete worker;
    throw;
  }
  Napi::Promise p = worker->Promise();
  worker->Queue();
  return p;
}

// schema(): { version, tokenizerVersion, names, numPassthrough, bm25: { k1, b } }
Napi::Value Schema(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("version", kFeatureSchemaVersion);
  o.Set("tokenizerVersion", kTokenizerVersion);
  Napi::Array names = Napi::Array::New(env, kNumFeatures);
  for (int i = 0; i < kNumFeatures; ++i) names.Set(static_cast<uint32_t>(i), kFeatureNames[i]);
  o.Set("names", names);
  o.Set("numPassthrough", Napi::Number::New(env, kNumPassthrough));
  Napi::Object bm25 = Napi::Object::New(env);
  bm25.Set("k1", Napi::Number::New(env, kBm25K1));
  bm25.Set("b", Napi::Number::New(env, kBm25B));
  o.Set("bm25", bm25);
  return o;
}

}  // namespace

void Register(Napi::Env env, Napi::Object exports) {
  exports.Set("FeatureCorpusStats", StatsWrap::Define(env));
  exports.Set("FeatureCorpusStatsBuilder", BuilderWrap::Define(env));
  exports.Set("featuresTokenize", Napi::Function::New(env, Tokenize, "featuresTokenize"));
  exports.Set("featuresExtract", Napi::Function::New(env, Extract, "featuresExtract"));
  exports.Set("featuresExtractAsync", Napi::Function::New(env, ExtractAsync, "featuresExtractAsync"));
  exports.Set("featuresSchema", Napi::Function::New(env, Schema, "featuresSchema"));
}

}  // namespace rg::features
