//===- ProgramDescription.cpp - a compiled step program's description as JSON ===//
#include "runtime/formats/ProgramDescription.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/base/Json.h"

namespace stepc::rt {
namespace {

JsonValue num(double value) {
  JsonValue v;
  v.kind = JsonValue::Kind::kNumber;
  char buffer[40];
  // %.17g round-trips every double; JSON has no inf/nan, and no finite value needs them here.
  std::snprintf(buffer, sizeof buffer, "%.17g", std::isfinite(value) ? value : 0.0);
  v.text = buffer;
  return v;
}

JsonValue shapeJson(const std::vector<int64_t> &shape) {
  JsonValue a = JsonValue::array();
  for (int64_t d : shape) a.items.push_back(num(static_cast<double>(d)));
  return a;
}

const char *kindName(Binding::Kind kind) {
  switch (kind) {
    case Binding::Kind::kParam: return "param";
    case Binding::Kind::kState: return "state";
    case Binding::Kind::kBatch: return "batch";
    case Binding::Kind::kStep: return "step";
    case Binding::Kind::kMetric: return "metric";
    case Binding::Kind::kLogits: return "logits";
    case Binding::Kind::kGrad: return "grad";
    case Binding::Kind::kPosition: return "position";
    case Binding::Kind::kSampleState: return "sample_state";
  }
  return "?";
}

JsonValue bindingsJson(const std::vector<Binding> &bindings) {
  JsonValue a = JsonValue::array();
  for (const Binding &b : bindings) {
    JsonValue o = JsonValue::object();
    o.add("kind", JsonValue::string(kindName(b.kind)));
    if (b.kind == Binding::Kind::kMetric)
      o.add("metric", JsonValue::string(b.metric));
    else if (b.kind != Binding::Kind::kStep && b.kind != Binding::Kind::kLogits &&
             b.kind != Binding::Kind::kPosition)
      o.add("index", num(b.index));
    a.items.push_back(std::move(o));
  }
  return a;
}

JsonValue entryJson(const EntryDescription &entry) {
  JsonValue o = JsonValue::object();
  o.add("symbol", JsonValue::string(entry.symbol));
  o.add("args", bindingsJson(entry.args));
  o.add("results", bindingsJson(entry.results));
  return o;
}

// Reading: each accessor names the key it wanted, so a damaged description says where.
class Reader {
 public:
  Status status;

  const JsonValue *member(const JsonValue &object, const char *key, JsonValue::Kind kind) {
    const JsonValue *v = object.find(key);
    if (!v || v->kind != kind) {
      fail(std::string("'") + key + "' is missing or has the wrong type");
      return nullptr;
    }
    return v;
  }
  std::string str(const JsonValue &object, const char *key) {
    const JsonValue *v = member(object, key, JsonValue::Kind::kString);
    return v ? v->text : std::string();
  }
  double number(const JsonValue &object, const char *key) {
    const JsonValue *v = member(object, key, JsonValue::Kind::kNumber);
    return v ? std::strtod(v->text.c_str(), nullptr) : 0.0;
  }
  int64_t integer(const JsonValue &object, const char *key) {
    double d = number(object, key);
    if (d != std::floor(d) || std::fabs(d) > 9.0e15) fail(std::string("'") + key + "' is not an integer");
    return static_cast<int64_t>(d);
  }
  std::vector<int64_t> shape(const JsonValue &object, const char *key) {
    std::vector<int64_t> out;
    const JsonValue *v = member(object, key, JsonValue::Kind::kArray);
    if (!v) return out;
    for (const JsonValue &d : v->items) {
      if (!d.isNumber()) return fail(std::string("'") + key + "' holds a non-number"), out;
      out.push_back(static_cast<int64_t>(std::strtod(d.text.c_str(), nullptr)));
    }
    return out;
  }
  DType dtype(const JsonValue &object) {
    DType d = DType::kF32;
    if (!parseDType(str(object, "dtype"), d)) fail("unknown dtype");
    return d;
  }
  void fail(const std::string &message) {
    if (status.ok()) status = Status::error("program description: " + message);
  }
};

void readBindings(Reader &r, const JsonValue &entry, const char *key, std::vector<Binding> &out) {
  const JsonValue *a = r.member(entry, key, JsonValue::Kind::kArray);
  if (!a) return;
  for (const JsonValue &o : a->items) {
    Binding b;
    std::string kind = r.str(o, "kind");
    if (kind == "param") b.kind = Binding::Kind::kParam;
    else if (kind == "state") b.kind = Binding::Kind::kState;
    else if (kind == "batch") b.kind = Binding::Kind::kBatch;
    else if (kind == "step") b.kind = Binding::Kind::kStep;
    else if (kind == "metric") b.kind = Binding::Kind::kMetric;
    else if (kind == "logits") b.kind = Binding::Kind::kLogits;
    else if (kind == "grad") b.kind = Binding::Kind::kGrad;
    else if (kind == "position") b.kind = Binding::Kind::kPosition;
    else if (kind == "sample_state") b.kind = Binding::Kind::kSampleState;
    else r.fail("unknown binding kind '" + kind + "'");
    if (b.kind == Binding::Kind::kMetric)
      b.metric = r.str(o, "metric");
    else if (b.kind != Binding::Kind::kStep && b.kind != Binding::Kind::kLogits &&
             b.kind != Binding::Kind::kPosition)
      b.index = static_cast<int>(r.integer(o, "index"));
    out.push_back(std::move(b));
  }
}

void readEntry(Reader &r, const JsonValue &root, const char *key, EntryDescription &out) {
  const JsonValue *o = r.member(root, key, JsonValue::Kind::kObject);
  if (!o) return;
  out.symbol = r.str(*o, "symbol");
  readBindings(r, *o, "args", out.args);
  readBindings(r, *o, "results", out.results);
}

Status checkEntry(const ProgramDescription &d, const EntryDescription &entry, const char *what) {
  auto fail = [&](const std::string &m) {
    return Status::error(std::string("program description: ") + what + ": " + m);
  };
  if (entry.symbol.empty()) return fail("no symbol");
  size_t batchBuffers = 2 * d.info.inputs.size();
  for (const auto *list : {&entry.args, &entry.results})
    for (const Binding &b : *list) {
      size_t limit = b.kind == Binding::Kind::kParam || b.kind == Binding::Kind::kGrad
                         ? d.info.params.size()
                     : b.kind == Binding::Kind::kState ? d.info.state.size()
                     : b.kind == Binding::Kind::kBatch ? batchBuffers
                     : b.kind == Binding::Kind::kSampleState ? d.sampleState.size()
                                                       : 1;
      if (b.index < 0 || static_cast<size_t>(b.index) >= limit)
        return fail(std::string("a ") + kindName(b.kind) + " binding has index " +
                    std::to_string(b.index) + " out of range");
    }
  return {};
}

}  // namespace

std::string writeProgramDescription(const ProgramDescription &d) {
  const ProgramInfo &info = d.info;
  JsonValue root = JsonValue::object();
  root.add("name", JsonValue::string(info.name));
  root.add("fingerprint", JsonValue::string(info.fingerprint));
  root.add("training", JsonValue::string(info.training));
  root.add("target", JsonValue::string(d.target));
  root.add("defaultSteps", num(static_cast<double>(info.defaultSteps)));
  root.add("flopsPerStep", num(info.flopsPerStep));
  root.add("executedFlopsPerStep", num(info.executedFlopsPerStep));
  root.add("samFlopsPerStep", num(info.samFlopsPerStep));
  if (info.sampleTemporaryBytes >= 0)
    root.add("sampleTemporaryBytes", num(static_cast<double>(info.sampleTemporaryBytes)));
  if (info.sampleStepTemporaryBytes >= 0)
    root.add("sampleStepTemporaryBytes", num(static_cast<double>(info.sampleStepTemporaryBytes)));
  if (info.sampleStateBytes >= 0)
    root.add("sampleStateBytes", num(static_cast<double>(info.sampleStateBytes)));
  if (info.predictedStepSeconds > 0) {
    root.add("predictedStepSeconds", num(info.predictedStepSeconds));
    root.add("predictedLaunchSeconds", num(info.predictedLaunchSeconds));
    root.add("predictedLaunches", num(static_cast<double>(info.predictedLaunches)));
    root.add("predictionDevice", JsonValue::string(info.predictionDevice));
    if (info.predictedLinkBytesPerSecond > 0) {
      root.add("predictedLinkBytesPerSecond", num(info.predictedLinkBytesPerSecond));
      root.add("predictedTransferSeconds", num(info.predictedTransferSeconds));
      root.add("predictedExposedSeconds", num(info.predictedExposedSeconds));
    }
  }
  root.add("plannedBytes", num(static_cast<double>(info.plannedBytes)));
  root.add("kernelCount", num(static_cast<double>(info.kernelCount)));
  if (info.dataParallelMicroBatches > 0) {
    root.add("dataParallelMicroBatches", num(static_cast<double>(info.dataParallelMicroBatches)));
    root.add("allReduces", num(static_cast<double>(info.allReduces)));
    root.add("allReduceBytes", num(static_cast<double>(info.allReduceBytes)));
    if (info.overlappedReductions > 0)
      root.add("overlappedReductions", num(static_cast<double>(info.overlappedReductions)));
    if (info.reduceScatters > 0) {
      root.add("reduceScatters", num(static_cast<double>(info.reduceScatters)));
      root.add("reduceScatterBytes", num(static_cast<double>(info.reduceScatterBytes)));
    }
  }
  if (info.shardedOver > 0) {
    root.add("shardedOver", num(static_cast<double>(info.shardedOver)));
    root.add("allGathers", num(static_cast<double>(info.allGathers)));
    root.add("allGatherBytes", num(static_cast<double>(info.allGatherBytes)));
    if (info.normShareGathers > 0)
      root.add("normShareGathers", num(static_cast<double>(info.normShareGathers)));
    if (info.deferredGathers > 0)
      root.add("deferredGathers", num(static_cast<double>(info.deferredGathers)));
  }
  if (!info.offload.empty()) {
    JsonValue list = JsonValue::array();
    for (const OffloadSpec &o : info.offload) {
      JsonValue e = JsonValue::object();
      e.add("kind", JsonValue::string(o.state ? "state" : "param"));
      e.add("index", num(o.index));
      e.add("layers", num(static_cast<double>(o.layers)));
      e.add("layerBytes", num(static_cast<double>(o.layerBytes)));
      list.items.push_back(std::move(e));
    }
    root.add("offload", std::move(list));
    root.add("offloadMode", JsonValue::string(info.offloadMode));
    root.add("offloadFetchBytes", num(static_cast<double>(info.offloadFetchBytes)));
    root.add("offloadStoreBytes", num(static_cast<double>(info.offloadStoreBytes)));
    root.add("offloadHostBytes", num(static_cast<double>(info.offloadHostBytes)));
  }
  if (!info.offloadSummary.empty()) root.add("offloadSummary", JsonValue::string(info.offloadSummary));
  JsonValue extra = JsonValue::array();
  for (const std::string &m : info.extraMetrics) extra.items.push_back(JsonValue::string(m));
  root.add("extraMetrics", std::move(extra));
  if (!info.repeatMemory.empty()) {
    JsonValue lines = JsonValue::array();
    for (const std::string &m : info.repeatMemory) lines.items.push_back(JsonValue::string(m));
    root.add("repeatMemory", std::move(lines));
  }
  if (!info.memoryBudget.empty()) root.add("memoryBudget", JsonValue::string(info.memoryBudget));
  JsonValue kernels = JsonValue::array();
  for (const std::string &k : info.kernelNames) kernels.items.push_back(JsonValue::string(k));
  root.add("kernels", std::move(kernels));
  if (!info.kernelBytes.empty()) {
    JsonValue bytes = JsonValue::array(), flops = JsonValue::array();
    for (double b : info.kernelBytes) bytes.items.push_back(num(b));
    for (double f : info.kernelFlops) flops.items.push_back(num(f));
    root.add("kernelBytes", std::move(bytes));
    root.add("kernelFlops", std::move(flops));
  }
  if (!d.debugChecks.empty()) {
    JsonValue checks = JsonValue::array();
    for (const std::string &c : d.debugChecks) checks.items.push_back(JsonValue::string(c));
    root.add("debugChecks", std::move(checks));
  }
  JsonValue params = JsonValue::array();
  for (const ParamSpec &p : info.params) {
    JsonValue o = JsonValue::object();
    o.add("name", JsonValue::string(p.name));
    o.add("shape", shapeJson(p.shape));
    o.add("dtype", JsonValue::string(dtypeName(p.dtype)));
    o.add("stackedDims", num(p.stackedDims));
    JsonValue init = JsonValue::object();
    init.add("kind", JsonValue::string(p.init.kind));
    init.add("value", num(p.init.value));
    init.add("mean", num(p.init.mean));
    init.add("std", num(p.init.std));
    init.add("a", num(p.init.a));
    init.add("b", num(p.init.b));
    init.add("gain", num(p.init.gain));
    o.add("init", std::move(init));
    params.items.push_back(std::move(o));
  }
  root.add("params", std::move(params));
  JsonValue state = JsonValue::array();
  for (const StateSpec &s : info.state) {
    JsonValue o = JsonValue::object();
    o.add("slot", JsonValue::string(s.slot));
    o.add("param", JsonValue::string(s.param));
    o.add("shape", shapeJson(s.shape));
    o.add("dtype", JsonValue::string(dtypeName(s.dtype)));
    if (s.shards > 1) o.add("shards", num(static_cast<double>(s.shards)));
    state.items.push_back(std::move(o));
  }
  root.add("state", std::move(state));
  JsonValue inputs = JsonValue::array();
  for (const InputSpec &in : info.inputs) {
    JsonValue o = JsonValue::object();
    o.add("name", JsonValue::string(in.name));
    bool tokens = in.source == InputSource::kTokenStream;
    o.add("source", JsonValue::string(tokens ? "token_stream" : "classification"));
    o.add("shape", shapeJson(in.shape));
    o.add("dtype", JsonValue::string(dtypeName(in.dtype)));
    o.add(tokens ? "vocab" : "classes", num(static_cast<double>(tokens ? in.vocab : in.classes)));
    inputs.items.push_back(std::move(o));
  }
  root.add("inputs", std::move(inputs));
  root.add("train", entryJson(d.train));
  root.add("eval", entryJson(d.eval));
  if (!d.sample.symbol.empty()) root.add("sample", entryJson(d.sample));
  if (!d.sampleStep.symbol.empty()) root.add("sampleStep", entryJson(d.sampleStep));
  if (!d.sampleState.empty()) {
    JsonValue states = JsonValue::array();
    for (const ProgramDescription::SampleState &s : d.sampleState) {
      JsonValue o = JsonValue::object();
      o.add("name", JsonValue::string(s.name));
      o.add("shape", shapeJson(s.shape));
      states.items.push_back(std::move(o));
    }
    root.add("sampleState", std::move(states));
  }
  if (!info.sampleStepUnavailable.empty())
    root.add("sampleStepUnavailable", JsonValue::string(info.sampleStepUnavailable));
  return writeJson(root);
}

Status parseProgramDescription(const std::string &text, ProgramDescription &out) {
  JsonValue root;
  if (Status s = parseJson(text, root); !s.ok())
    return Status::error("program description: " + s.message());
  if (!root.isObject()) return Status::error("program description: not a JSON object");
  Reader r;
  ProgramDescription d;
  ProgramInfo &info = d.info;
  info.name = r.str(root, "name");
  info.fingerprint = r.str(root, "fingerprint");
  if (const JsonValue *t = root.find("training"); t && t->kind == JsonValue::Kind::kString)
    info.training = t->text;  // optional: test descriptions and hand-written programs omit it
  d.target = r.str(root, "target");
  info.defaultSteps = r.integer(root, "defaultSteps");
  info.flopsPerStep = r.number(root, "flopsPerStep");
  if (const JsonValue *e = root.find("executedFlopsPerStep"); e && e->isNumber())
    info.executedFlopsPerStep = std::strtod(e->text.c_str(), nullptr);
  if (const JsonValue *e = root.find("samFlopsPerStep"); e && e->isNumber())
    info.samFlopsPerStep = std::strtod(e->text.c_str(), nullptr);
  if (const JsonValue *e = root.find("sampleTemporaryBytes"); e && e->isNumber())
    info.sampleTemporaryBytes = static_cast<int64_t>(std::strtod(e->text.c_str(), nullptr));
  if (const JsonValue *e = root.find("sampleStepTemporaryBytes"); e && e->isNumber())
    info.sampleStepTemporaryBytes = static_cast<int64_t>(std::strtod(e->text.c_str(), nullptr));
  if (const JsonValue *e = root.find("sampleStateBytes"); e && e->isNumber())
    info.sampleStateBytes = static_cast<int64_t>(std::strtod(e->text.c_str(), nullptr));
  if (const JsonValue *e = root.find("predictedStepSeconds"); e && e->isNumber()) {
    info.predictedStepSeconds = std::strtod(e->text.c_str(), nullptr);
    info.predictedLaunchSeconds = r.number(root, "predictedLaunchSeconds");
    info.predictedLaunches = static_cast<int64_t>(r.number(root, "predictedLaunches"));
    if (const JsonValue *dev = root.find("predictionDevice"); dev && dev->isString())
      info.predictionDevice = dev->text;
    if (const JsonValue *link = root.find("predictedLinkBytesPerSecond"); link && link->isNumber()) {
      info.predictedLinkBytesPerSecond = std::strtod(link->text.c_str(), nullptr);
      info.predictedTransferSeconds = r.number(root, "predictedTransferSeconds");
      info.predictedExposedSeconds = r.number(root, "predictedExposedSeconds");
    }
  }
  info.plannedBytes = r.integer(root, "plannedBytes");
  info.kernelCount = r.integer(root, "kernelCount");
  if (const JsonValue *e = root.find("dataParallelMicroBatches"); e && e->isNumber()) {
    info.dataParallelMicroBatches = r.integer(root, "dataParallelMicroBatches");
    info.allReduces = r.integer(root, "allReduces");
    info.allReduceBytes = r.integer(root, "allReduceBytes");
    if (const JsonValue *o = root.find("overlappedReductions"); o && o->isNumber())
      info.overlappedReductions = r.integer(root, "overlappedReductions");
    if (const JsonValue *o = root.find("reduceScatters"); o && o->isNumber()) {
      info.reduceScatters = r.integer(root, "reduceScatters");
      info.reduceScatterBytes = r.integer(root, "reduceScatterBytes");
    }
  }
  if (const JsonValue *e = root.find("shardedOver"); e && e->isNumber()) {
    info.shardedOver = r.integer(root, "shardedOver");
    info.allGathers = r.integer(root, "allGathers");
    info.allGatherBytes = r.integer(root, "allGatherBytes");
    if (const JsonValue *n = root.find("normShareGathers"); n && n->isNumber())
      info.normShareGathers = r.integer(root, "normShareGathers");
    if (const JsonValue *n = root.find("deferredGathers"); n && n->isNumber())
      info.deferredGathers = r.integer(root, "deferredGathers");
  }
  if (const JsonValue *a = root.find("offload"); a && a->isArray()) {
    for (const JsonValue &o : a->items) {
      OffloadSpec e;
      std::string kind = r.str(o, "kind");
      if (kind != "param" && kind != "state") r.fail("an offload entry's kind is '" + kind + "'");
      e.state = kind == "state";
      e.index = static_cast<int>(r.integer(o, "index"));
      e.layers = r.integer(o, "layers");
      e.layerBytes = r.integer(o, "layerBytes");
      info.offload.push_back(e);
    }
    info.offloadMode = r.str(root, "offloadMode");
    info.offloadFetchBytes = r.integer(root, "offloadFetchBytes");
    info.offloadStoreBytes = r.integer(root, "offloadStoreBytes");
    info.offloadHostBytes = r.integer(root, "offloadHostBytes");
  }
  if (const JsonValue *m = root.find("offloadSummary"); m && m->kind == JsonValue::Kind::kString)
    info.offloadSummary = m->text;
  if (const JsonValue *a = r.member(root, "extraMetrics", JsonValue::Kind::kArray))
    for (const JsonValue &m : a->items) info.extraMetrics.push_back(m.text);
  if (const JsonValue *a = root.find("repeatMemory"); a && a->isArray())
    for (const JsonValue &m : a->items) info.repeatMemory.push_back(m.text);
  if (const JsonValue *m = root.find("memoryBudget"); m && m->kind == JsonValue::Kind::kString)
    info.memoryBudget = m->text;
  // Optional: descriptions without a profile table are fine.
  if (const JsonValue *a = root.find("kernels"); a && a->isArray())
    for (const JsonValue &k : a->items) info.kernelNames.push_back(k.text);
  for (auto [key, out] : {std::pair<const char *, std::vector<double> *>{"kernelBytes", &info.kernelBytes},
                          {"kernelFlops", &info.kernelFlops}})
    if (const JsonValue *a = root.find(key); a && a->isArray())
      for (const JsonValue &k : a->items) out->push_back(std::strtod(k.text.c_str(), nullptr));
  if (!info.kernelBytes.empty() && (info.kernelBytes.size() != info.kernelNames.size() ||
                                    info.kernelFlops.size() != info.kernelNames.size()))
    r.fail("the profile's kernelBytes and kernelFlops must have one entry per kernel name");
  if (const JsonValue *a = root.find("debugChecks"); a && a->isArray())
    for (const JsonValue &c : a->items) d.debugChecks.push_back(c.text);
  if (const JsonValue *a = r.member(root, "params", JsonValue::Kind::kArray))
    for (const JsonValue &o : a->items) {
      ParamSpec p;
      p.name = r.str(o, "name");
      p.shape = r.shape(o, "shape");
      p.dtype = r.dtype(o);
      p.stackedDims = static_cast<int>(r.integer(o, "stackedDims"));
      if (const JsonValue *init = r.member(o, "init", JsonValue::Kind::kObject)) {
        p.init.kind = r.str(*init, "kind");
        p.init.value = r.number(*init, "value");
        p.init.mean = r.number(*init, "mean");
        p.init.std = r.number(*init, "std");
        p.init.a = r.number(*init, "a");
        p.init.b = r.number(*init, "b");
        p.init.gain = r.number(*init, "gain");
      }
      info.params.push_back(std::move(p));
    }
  if (const JsonValue *a = r.member(root, "state", JsonValue::Kind::kArray))
    for (const JsonValue &o : a->items) {
      StateSpec s;
      s.slot = r.str(o, "slot");
      s.param = r.str(o, "param");
      s.shape = r.shape(o, "shape");
      s.dtype = r.dtype(o);
      if (const JsonValue *n = o.find("shards"); n && n->isNumber()) s.shards = r.integer(o, "shards");
      info.state.push_back(std::move(s));
    }
  if (const JsonValue *a = r.member(root, "inputs", JsonValue::Kind::kArray))
    for (const JsonValue &o : a->items) {
      InputSpec in;
      in.name = r.str(o, "name");
      std::string source = r.str(o, "source");
      in.shape = r.shape(o, "shape");
      in.dtype = r.dtype(o);
      if (source == "token_stream") {
        in.source = InputSource::kTokenStream;
        in.vocab = r.integer(o, "vocab");
      } else if (source == "classification") {
        in.source = InputSource::kClassification;
        in.classes = r.integer(o, "classes");
      } else {
        r.fail("unknown input source '" + source + "'");
      }
      info.inputs.push_back(std::move(in));
    }
  readEntry(r, root, "train", d.train);
  readEntry(r, root, "eval", d.eval);
  if (root.find("sample")) readEntry(r, root, "sample", d.sample);  // optional
  if (root.find("sampleStep")) readEntry(r, root, "sampleStep", d.sampleStep);
  if (const JsonValue *a = root.find("sampleState"); a && a->isArray())
    for (const JsonValue &o : a->items)
      d.sampleState.push_back({r.str(o, "name"), r.shape(o, "shape")});
  if (const JsonValue *e = root.find("sampleStepUnavailable"); e && e->isString())
    info.sampleStepUnavailable = e->text;
  if (!r.status.ok()) return r.status;
  if (Status s = validateProgramInfo(info); !s.ok()) return s;
  if (Status s = checkEntry(d, d.train, "train"); !s.ok()) return s;
  if (Status s = checkEntry(d, d.eval, "eval"); !s.ok()) return s;
  if (!d.sample.symbol.empty())
    if (Status s = checkEntry(d, d.sample, "sample"); !s.ok()) return s;
  if (!d.sampleStep.symbol.empty())
    if (Status s = checkEntry(d, d.sampleStep, "sampleStep"); !s.ok()) return s;
  out = std::move(d);
  return {};
}

}  // namespace stepc::rt
