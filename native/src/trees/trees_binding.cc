// N-API surface of the tree evaluator. Everything crossing from JS is checked here (types,
// lengths, integer ranges); the model image is re-validated by Attach() on every construction,
// since it may come from another thread's SharedArrayBuffer.
//
// Exports:
//   treesCompile(spec) -> Uint8Array            compiled image (throws code ERR_MODEL_FORMAT)
//   treesKernel() -> 'avx512' | 'avx2' | 'scalar'
//   TreeEvaluator(image: Uint8Array)            view over an image (SharedArrayBuffer-backed or not)
//     .info() -> { numFeatures, numGroups, numTrees, objective, layout, marginPrecision, depth, numValueOutputs }
//   spec.leafValues64 (optional Float64Array, one per node): float64 leaves summed in float64 (LightGBM);
//   such a model's margins are Float64Array (marginPrecision 'float64').
//   spec.clampPositiveInfinity (optional boolean): +inf inputs read as FLT_MAX (LightGBM's x <= +inf).
//     .predict(rows, nRows, out, valueOutput, kernel?)   fills `out` on the calling thread
//     .predictAsync(rows, nRows, valueOutput) -> Promise<Float32Array | Float64Array>
//     .dispose()
#include "trees/trees_binding.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "trees/tree_eval.h"

namespace rg::trees {
namespace {

[[noreturn]] void Throw(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  throw err;
}

template <typename T>
Napi::TypedArrayOf<T> RequireTyped(Napi::Env env, Napi::Value v, napi_typedarray_type type, const char* what) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type) {
    Throw(env, "ERR_INVALID_ARGUMENT", std::string(what) + " has the wrong type");
  }
  return v.As<Napi::TypedArrayOf<T>>();
}

uint32_t RequireU32(Napi::Env env, Napi::Value v, const char* what) {
  if (!v.IsNumber()) Throw(env, "ERR_INVALID_ARGUMENT", std::string(what) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 4294967295.0) || std::floor(d) != d) {
    Throw(env, "ERR_INVALID_ARGUMENT", std::string(what) + " must be an unsigned 32-bit integer");
  }
  return static_cast<uint32_t>(d);
}

// nRows must be a non-negative safe integer.
size_t RequireRowCount(Napi::Env env, Napi::Value v) {
  if (!v.IsNumber()) Throw(env, "ERR_INVALID_ARGUMENT", "nRows must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 9007199254740991.0) || std::floor(d) != d) {
    Throw(env, "ERR_INVALID_ARGUMENT", "nRows must be a non-negative safe integer");
  }
  return static_cast<size_t>(d);
}

struct RawTyped {
  napi_typedarray_type type;
  size_t length;
  void* data;
};

// One napi call: fails (false) for anything that is not a typed array.
bool GetRawTyped(napi_env env, napi_value v, RawTyped& out) {
  napi_value buffer;
  size_t offset;
  return napi_get_typedarray_info(env, v, &out.type, &out.length, &out.data, &buffer, &offset) == napi_ok &&
         (out.data != nullptr || out.length == 0);
}

Napi::Value Compile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject())
    Throw(env, "ERR_INVALID_ARGUMENT", "treesCompile(spec) needs an object");
  Napi::Object spec = info[0].As<Napi::Object>();
  FlatEnsemble in;
  in.numFeatures = RequireU32(env, spec.Get("numFeatures"), "numFeatures");
  in.numGroups = RequireU32(env, spec.Get("numGroups"), "numGroups");
  Napi::Value obj = spec.Get("objective");
  if (!obj.IsString() || !ParseObjective(obj.As<Napi::String>().Utf8Value(), in.objective)) {
    Throw(env, "ERR_UNSUPPORTED_MODEL", "unsupported objective");
  }
  Napi::Value base = spec.Get("baseMargin");
  if (!base.IsNumber()) Throw(env, "ERR_INVALID_ARGUMENT", "baseMargin must be a number");
  in.baseMargin = static_cast<float>(base.As<Napi::Number>().DoubleValue());
  auto offsets = RequireTyped<int32_t>(env, spec.Get("nodeOffsets"), napi_int32_array, "nodeOffsets");
  auto left = RequireTyped<int32_t>(env, spec.Get("left"), napi_int32_array, "left");
  auto right = RequireTyped<int32_t>(env, spec.Get("right"), napi_int32_array, "right");
  auto splitIndex = RequireTyped<int32_t>(env, spec.Get("splitIndex"), napi_int32_array, "splitIndex");
  auto splitCondition = RequireTyped<float>(env, spec.Get("splitCondition"), napi_float32_array, "splitCondition");
  auto defaultLeft = RequireTyped<uint8_t>(env, spec.Get("defaultLeft"), napi_uint8_array, "defaultLeft");
  auto groups = RequireTyped<int32_t>(env, spec.Get("groups"), napi_int32_array, "groups");
  auto weights = RequireTyped<float>(env, spec.Get("weights"), napi_float32_array, "weights");
  if (offsets.ElementLength() < 1) Throw(env, "ERR_MODEL_FORMAT", "nodeOffsets must have numTrees + 1 entries");
  in.numTrees = offsets.ElementLength() - 1;
  in.totalNodes = left.ElementLength();
  if (right.ElementLength() != in.totalNodes || splitIndex.ElementLength() != in.totalNodes ||
      splitCondition.ElementLength() != in.totalNodes || defaultLeft.ElementLength() != in.totalNodes) {
    Throw(env, "ERR_MODEL_FORMAT", "per-node arrays have different lengths");
  }
  if (groups.ElementLength() != in.numTrees || weights.ElementLength() != in.numTrees) {
    Throw(env, "ERR_MODEL_FORMAT", "per-tree arrays (groups, weights) do not match the tree count");
  }
  in.nodeOffsets = offsets.Data();
  in.left = left.Data();
  in.right = right.Data();
  in.splitIndex = splitIndex.Data();
  in.splitCondition = splitCondition.Data();
  in.defaultLeft = defaultLeft.Data();
  in.groups = groups.Data();
  in.weights = weights.Data();
  // Optional float64 leaves (LightGBM models): absent/undefined keeps the float32 model.
  Napi::Value leaf64 = spec.Get("leafValues64");
  Napi::Float64Array leafValues64;
  if (!leaf64.IsUndefined()) {
    leafValues64 = RequireTyped<double>(env, leaf64, napi_float64_array, "leafValues64");
    if (leafValues64.ElementLength() != in.totalNodes) {
      Throw(env, "ERR_MODEL_FORMAT", "leafValues64 must have one entry per node");
    }
    in.leafValues64 = leafValues64.Data();
  }
  Napi::Value clamp = spec.Get("clampPositiveInfinity");
  if (!clamp.IsUndefined()) {
    if (!clamp.IsBoolean()) Throw(env, "ERR_MODEL_FORMAT", "clampPositiveInfinity must be a boolean");
    in.clampPositiveInfinity = clamp.As<Napi::Boolean>().Value();
  }
  std::vector<uint8_t> image;
  std::string error;
  if (!rg::trees::Compile(in, image, error)) Throw(env, "ERR_MODEL_FORMAT", error);
  Napi::Uint8Array out = Napi::Uint8Array::New(env, image.size());
  std::memcpy(out.Data(), image.data(), image.size());
  return out;
}

Napi::Value KernelName(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), ActiveKernelName()); }

class PredictWorker : public Napi::AsyncWorker {
 public:
  PredictWorker(Napi::Env env, const Model& model, Napi::Object image, std::vector<float>&& rows, size_t nRows,
                bool value)
      : Napi::AsyncWorker(env, "relevance-gate:trees-predict"),
        deferred_(Napi::Promise::Deferred::New(env)),
        model_(model),
        image_(Napi::Persistent(image)),
        rows_(std::move(rows)),
        nRows_(nRows),
        value_(value) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      if (MarginIsDouble(model_)) {
        margins64_.resize(nRows_ * model_.numGroups);
        PredictMargin64(model_, rows_.data(), nRows_, margins64_.data());
        if (value_) {
          values_.resize(nRows_ * NumValueOutputs(model_));
          TransformMargins(model_, margins64_.data(), nRows_, values_.data());
        }
      } else {
        margins_.resize(nRows_ * model_.numGroups);
        PredictMargin(model_, rows_.data(), nRows_, margins_.data());
        if (value_) {
          values_.resize(nRows_ * NumValueOutputs(model_));
          TransformMargins(model_, margins_.data(), nRows_, values_.data());
        }
      }
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (value_) {
      auto out = Napi::Float64Array::New(env, values_.size());
      if (!values_.empty()) std::memcpy(out.Data(), values_.data(), values_.size() * sizeof(double));
      deferred_.Resolve(out);
    } else if (MarginIsDouble(model_)) {
      auto out = Napi::Float64Array::New(env, margins64_.size());
      if (!margins64_.empty()) std::memcpy(out.Data(), margins64_.data(), margins64_.size() * sizeof(double));
      deferred_.Resolve(out);
    } else {
      auto out = Napi::Float32Array::New(env, margins_.size());
      if (!margins_.empty()) std::memcpy(out.Data(), margins_.data(), margins_.size() * sizeof(float));
      deferred_.Resolve(out);
    }
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Model model_;
  Napi::ObjectReference image_;  // keeps the image's buffer alive while the pool thread reads it
  std::vector<float> rows_;      // private copy: the caller may reuse its array meanwhile
  size_t nRows_;
  bool value_;
  std::vector<float> margins_;
  std::vector<double> margins64_;
  std::vector<double> values_;
};

class TreeEvaluator : public Napi::ObjectWrap<TreeEvaluator> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "TreeEvaluator",
        {InstanceMethod<&TreeEvaluator::Info>("info"), InstanceMethod<&TreeEvaluator::Predict>("predict"),
         InstanceMethod<&TreeEvaluator::PredictAsync>("predictAsync"),
         InstanceMethod<&TreeEvaluator::Dispose>("dispose")});
  }

  explicit TreeEvaluator(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TreeEvaluator>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1) Throw(env, "ERR_INVALID_ARGUMENT", "TreeEvaluator(image) needs a Uint8Array");
    auto image = RequireTyped<uint8_t>(env, info[0], napi_uint8_array, "image");
    std::string error;
    if (!Attach(image.Data(), image.ByteLength(), model_, error)) Throw(env, "ERR_MODEL_FORMAT", error);
    image_ = Napi::Persistent(image.As<Napi::Object>());
    live_ = true;
  }

 private:
  void RequireLive(Napi::Env env) const {
    if (!live_) Throw(env, "ERR_DISPOSED", "tree model has been disposed");
  }

  Napi::Value Info(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    RequireLive(env);
    Napi::Object o = Napi::Object::New(env);
    o.Set("numFeatures", model_.numFeatures);
    o.Set("numGroups", model_.numGroups);
    o.Set("numTrees", model_.numTrees);
    o.Set("objective", static_cast<uint32_t>(model_.objective));
    o.Set("layout", IsPerfect(model_) ? "perfect" : "generic");
    o.Set("marginPrecision", MarginIsDouble(model_) ? "float64" : "float32");
    o.Set("depth", model_.depth);
    o.Set("numValueOutputs", NumValueOutputs(model_));
    return o;
  }

  // Returns the row count after checking rows against the model.
  size_t CheckRows(Napi::Env env, const Napi::CallbackInfo& info, Napi::Float32Array& rows) {
    if (info.Length() < 3) Throw(env, "ERR_INVALID_ARGUMENT", "predict(rows, nRows, ...) needs more arguments");
    rows = RequireTyped<float>(env, info[0], napi_float32_array, "rows (must be a Float32Array)");
    const size_t nRows = RequireRowCount(env, info[1]);
    const size_t nf = model_.numFeatures;
    if (nRows > std::numeric_limits<size_t>::max() / nf / 8 || rows.ElementLength() != nRows * nf) {
      Throw(env, "ERR_INVALID_ARGUMENT",
            "rows has " + std::to_string(rows.ElementLength()) +
                " values; expected nRows * numFeatures = " + std::to_string(nRows) + " * " + std::to_string(nf));
    }
    return nRows;
  }

  // The hot path (called per request with a few rows): raw napi calls, one per argument.
  Napi::Value Predict(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    RequireLive(env);
    if (info.Length() < 4)
      Throw(env, "ERR_INVALID_ARGUMENT", "predict(rows, nRows, out, valueOutput) needs 4 arguments");
    RawTyped rows, out;
    if (!GetRawTyped(env, info[0], rows) || rows.type != napi_float32_array) {
      Throw(env, "ERR_INVALID_ARGUMENT", "rows (must be a Float32Array) has the wrong type");
    }
    const size_t nRows = RequireRowCount(env, info[1]);
    const size_t nf = model_.numFeatures;
    if (nRows > std::numeric_limits<size_t>::max() / nf / 8 || rows.length != nRows * nf) {
      Throw(env, "ERR_INVALID_ARGUMENT",
            "rows has " + std::to_string(rows.length) +
                " values; expected nRows * numFeatures = " + std::to_string(nRows) + " * " + std::to_string(nf));
    }
    bool value = false;
    if (napi_get_value_bool(env, info[3], &value) != napi_ok) {
      Throw(env, "ERR_INVALID_ARGUMENT", "valueOutput must be a boolean");
    }
    KernelChoice kernel = KernelChoice::kAuto;
    if (info.Length() >= 5 && info[4].IsNumber()) {
      const uint32_t k = RequireU32(env, info[4], "kernel");
      if (k > 3) Throw(env, "ERR_INVALID_ARGUMENT", "kernel must be 0..3");
      kernel = static_cast<KernelChoice>(k);
    }
    const auto* x = static_cast<const float*>(rows.data);
    const bool wide = MarginIsDouble(model_);
    if (!GetRawTyped(env, info[2], out) || out.type != (value || wide ? napi_float64_array : napi_float32_array)) {
      Throw(env, "ERR_INVALID_ARGUMENT", "out has the wrong type");
    }
    if (wide) {
      // Float64 margins (perfect64 / generic64 layouts).
      if (!value) {
        if (out.length != nRows * model_.numGroups) Throw(env, "ERR_INVALID_ARGUMENT", "out has the wrong length");
        PredictMargin64(model_, x, nRows, static_cast<double*>(out.data), kernel);
      } else {
        if (out.length != nRows * NumValueOutputs(model_))
          Throw(env, "ERR_INVALID_ARGUMENT", "out has the wrong length");
        thread_local std::vector<double> margins64;
        if (margins64.size() < nRows * model_.numGroups) margins64.resize(nRows * model_.numGroups);
        PredictMargin64(model_, x, nRows, margins64.data(), kernel);
        TransformMargins(model_, margins64.data(), nRows, static_cast<double*>(out.data));
      }
      return env.Undefined();
    }
    if (!value) {
      if (out.length != nRows * model_.numGroups) Throw(env, "ERR_INVALID_ARGUMENT", "out has the wrong length");
      PredictMargin(model_, x, nRows, static_cast<float*>(out.data), kernel);
    } else {
      if (out.length != nRows * NumValueOutputs(model_)) Throw(env, "ERR_INVALID_ARGUMENT", "out has the wrong length");
      thread_local std::vector<float> margins;
      if (margins.size() < nRows * model_.numGroups) margins.resize(nRows * model_.numGroups);
      PredictMargin(model_, x, nRows, margins.data(), kernel);
      TransformMargins(model_, margins.data(), nRows, static_cast<double*>(out.data));
    }
    return env.Undefined();
  }

  Napi::Value PredictAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    RequireLive(env);
    Napi::Float32Array rows;
    const size_t nRows = CheckRows(env, info, rows);
    const bool value = info[2].ToBoolean();
    std::vector<float> copy(rows.Data(), rows.Data() + rows.ElementLength());
    auto* worker = new PredictWorker(env, model_, image_.Value(), std::move(copy), nRows, value);
    Napi::Promise promise = worker->Promise();
    worker->Queue();
    return promise;
  }

  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    // Pending async work holds its own reference to the image, so it finishes safely.
    live_ = false;
    model_ = Model{};
    image_.Reset();
    return info.Env().Undefined();
  }

  Model model_;
  Napi::ObjectReference image_;
  bool live_ = false;
};

}  // namespace

void Register(Napi::Env env, Napi::Object exports) {
  exports.Set("treesCompile", Napi::Function::New<Compile>(env, "treesCompile"));
  exports.Set("treesKernel", Napi::Function::New<KernelName>(env, "treesKernel"));
  exports.Set("TreeEvaluator", TreeEvaluator::Define(env));
}

}  // namespace rg::trees
