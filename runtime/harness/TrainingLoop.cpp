//===- TrainingLoop.cpp - the training executable's `train` and `eval` ---===//
#include "runtime/harness/TrainingLoop.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>

#include "runtime/harness/BatchSource.h"
#include "runtime/formats/Checkpoint.h"
#include "runtime/base/Init.h"
#include "runtime/formats/Safetensors.h"
#include "runtime/hal/Profile.h"

namespace stepc::rt {
namespace {


constexpr const char *kCheckpointPrefix = "checkpoint-";
constexpr const char *kCheckpointSuffix = ".safetensors";
constexpr int kStepDigits = 10;

// The host memory of a run: params, state and batch, owned here and lent to the program as
// StepBuffers. F32 and I32 elements are both 4 bytes; each buffer has its own vector, except
// the tensors the program keeps in its own host tier (--device-memory), which are its.
class HostBuffers {
 public:
  HostBuffers(const ProgramInfo &info, StepProgram *program) {
    for (size_t i = 0; i < info.params.size(); ++i)
      add(views_.params, info.params[i].name, DType::kF32, info.params[i].shape,
          program ? program->hostTensor(false, static_cast<int>(i)) : nullptr);
    for (size_t i = 0; i < info.state.size(); ++i)
      add(views_.state, info.state[i].slot + "/" + info.state[i].param, DType::kF32,
          localShape(info.state[i]), program ? program->hostTensor(true, static_cast<int>(i)) : nullptr);
    for (const InputSpec &in : info.inputs) {
      auto [first, second] = batchBufferNames(in);
      add(views_.batch, first, in.dtype, in.shape);
      add(views_.batch, second, DType::kI32,
          in.source == InputSource::kTokenStream ? in.shape : std::vector<int64_t>{in.shape[0]});
    }
  }
  const StepBuffers &views() const { return views_; }

 private:
  void add(std::vector<TensorBuffer> &list, const std::string &name, DType dtype,
           const std::vector<int64_t> &shape, float *lent = nullptr) {
    TensorBuffer buffer{name, dtype, shape, nullptr};
    if (lent) {
      std::fill(lent, lent + buffer.elements(), 0.0f);  // as a vector starts
      buffer.data = lent;
    } else if (dtype == DType::kI32) {
      ints_.emplace_back(static_cast<size_t>(buffer.elements()), 0);
      buffer.data = ints_.back().data();
    } else {
      floats_.emplace_back(static_cast<size_t>(buffer.elements()), 0.0f);
      buffer.data = floats_.back().data();
    }
    list.push_back(std::move(buffer));
  }

  // Lists of vectors: a vector's heap block does not move when the list grows.
  std::vector<std::vector<float>> floats_;
  std::vector<std::vector<int32_t>> ints_;
  StepBuffers views_;
};

Status initParams(const ProgramInfo &info, uint64_t seed, const StepBuffers &buffers) {
  std::vector<double> values;
  for (size_t i = 0; i < info.params.size(); ++i) {
    const ParamSpec &p = info.params[i];
    std::string error = initParameter(p.init, p.name, p.shape, p.stackedDims, seed, values);
    if (!error.empty()) return Status::error("initialising parameter '" + p.name + "': " + error);
    float *out = buffers.params[i].f32();
    for (size_t k = 0; k < values.size(); ++k) out[k] = static_cast<float>(values[k]);
  }
  return {};
}

// Replaces every parameter with the tensor of the same name in a safetensors file (F32, F16,
// BF16 or F64). Tensors the model does not have are ignored (PyTorch state dicts hold buffers).
Status loadParams(const std::string &path, const ProgramInfo &info, const StepBuffers &buffers) {
  SafetensorsFile file;
  if (Status s = SafetensorsFile::read(path, file); !s.ok()) return s.withContext("--init-from");
  std::vector<std::vector<float>> loaded(info.params.size());
  for (size_t i = 0; i < info.params.size(); ++i) {
    const ParamSpec &p = info.params[i];
    if (!file.find(p.name))
      return Status::error("--init-from " + path + ": no tensor named '" + p.name +
                           "' (a parameter of this model)");
    std::vector<int64_t> shape;
    if (Status s = file.readFloats(p.name, loaded[i], &shape); !s.ok())
      return s.withContext("--init-from");
    if (shape != p.shape)
      return Status::error("--init-from " + path + ": tensor '" + p.name + "' is " +
                           formatShape(shape) + ", this model's parameter is " +
                           formatShape(p.shape));
    // A NaN or Inf start trains to nothing but NaN: refuse it where it is.
    for (size_t k = 0; k < loaded[i].size(); ++k)
      if (!std::isfinite(loaded[i][k]))
        return Status::error("--init-from " + path + ": tensor '" + p.name + "' holds " +
                             (std::isnan(loaded[i][k]) ? "NaN" : "Inf") + " at element " +
                             std::to_string(k) + "; parameters must be finite");
  }
  for (size_t i = 0; i < loaded.size(); ++i)
    std::copy(loaded[i].begin(), loaded[i].end(), buffers.params[i].f32());
  return {};
}

Status saveParams(const std::string &path, const ProgramInfo &info, const StepBuffers &buffers,
                  int64_t step) {
  std::vector<TensorView> views;
  for (const TensorBuffer &b : buffers.params)
    views.push_back({b.name, DType::kF32, b.shape, b.data});
  std::map<std::string, std::string> metadata = {{"stepc.model", info.name},
                                                 {"stepc.fingerprint", info.fingerprint},
                                                 {"stepc.step", std::to_string(step)}};
  return writeSafetensors(path, views, metadata).withContext("--save-params");
}

std::vector<CheckpointTensor> paramTensors(const ProgramInfo &info, const StepBuffers &buffers) {
  std::vector<CheckpointTensor> tensors;
  for (size_t i = 0; i < info.params.size(); ++i)
    tensors.push_back({"", info.params[i].name, DType::kF32, info.params[i].shape,
                       buffers.params[i].data});
  return tensors;
}

// The tensors a checkpoint holds: params and state, whole. With --shard-optimizer a state
// buffer of the step is this rank's block of its tensor (StateSpec::shards), so such a tensor
// goes through a whole-sized scratch that lives only while one checkpoint is read or written:
// the blocks are gathered from every rank before a write, and this rank's block is kept after
// a read (so a checkpoint does not depend on the rank count).
class CheckpointTensors {
 public:
  CheckpointTensors(const ProgramInfo &info, const StepBuffers &buffers, int rank)
      : info_(info), buffers_(buffers), rank_(rank), tensors_(paramTensors(info, buffers)) {
    for (size_t i = 0; i < info.state.size(); ++i)
      tensors_.push_back({info.state[i].slot, info.state[i].param, DType::kF32,
                          info.state[i].shape, buffers.state[i].data});
  }
  /// The tensors to read into; call keepBlocks() after the read.
  const std::vector<CheckpointTensor> &forRead() {
    openWhole();
    return tensors_;
  }
  void keepBlocks() {
    forEachSharded([&](size_t i, float *whole, int64_t block) {
      std::copy(whole + rank_ * block, whole + (rank_ + 1) * block, buffers_.state[i].f32());
    });
    closeWhole();
  }
  /// The tensors to write, whole: every rank calls it at the same step (it gathers).
  Status forWrite(StepProgram &program, const std::vector<CheckpointTensor> *&out) {
    openWhole();
    Status status;
    forEachSharded([&](size_t i, float *whole, int64_t block) {
      std::copy(buffers_.state[i].f32(), buffers_.state[i].f32() + block, whole + rank_ * block);
      if (status.ok()) status = program.gatherBlocks(whole, block, static_cast<int64_t>(i));
    });
    out = &tensors_;
    return status;
  }
  void release() { closeWhole(); }

 private:
  template <typename F>
  void forEachSharded(F f) {
    for (size_t i = 0, w = 0; i < info_.state.size(); ++i)
      if (info_.state[i].shards > 1)
        f(i, whole_[w++].data(), elementCount(localShape(info_.state[i])));
  }
  void openWhole() {
    whole_.clear();
    for (size_t i = 0; i < info_.state.size(); ++i)
      if (info_.state[i].shards > 1) {
        whole_.emplace_back(static_cast<size_t>(elementCount(info_.state[i].shape)));
        tensors_[info_.params.size() + i].data = whole_.back().data();
      }
  }
  void closeWhole() {
    for (size_t i = 0; i < info_.state.size(); ++i)
      tensors_[info_.params.size() + i].data = buffers_.state[i].data;
    whole_.clear();
    whole_.shrink_to_fit();
  }

  const ProgramInfo &info_;
  const StepBuffers &buffers_;
  int64_t rank_;
  std::vector<CheckpointTensor> tensors_;
  std::vector<std::vector<float>> whole_;  // a moved inner vector keeps its data in place
};

// The step of a checkpoint file name, or -1 if the name is not one.
int64_t checkpointStep(const std::string &name) {
  size_t prefix = std::strlen(kCheckpointPrefix), suffix = std::strlen(kCheckpointSuffix);
  if (name.size() != prefix + kStepDigits + suffix || name.compare(0, prefix, kCheckpointPrefix) ||
      name.compare(prefix + kStepDigits, suffix, kCheckpointSuffix))
    return -1;
  int64_t step = 0;
  for (size_t i = prefix; i < prefix + kStepDigits; ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

// The checkpoints in `dir`, oldest first.
Status listCheckpoints(const std::string &dir, std::vector<std::pair<int64_t, std::string>> &out) {
  out.clear();
  DIR *d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT) return {};
    return Status::error("--checkpoint-dir " + dir + ": cannot list it: " + std::strerror(errno));
  }
  while (struct dirent *entry = ::readdir(d)) {
    int64_t step = checkpointStep(entry->d_name);
    if (step >= 0) out.push_back({step, dir + "/" + entry->d_name});
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return {};
}

// mkdir -p.
Status makeDirectories(const std::string &dir) {
  std::string path;
  size_t at = 0;
  while (at <= dir.size()) {
    size_t slash = dir.find('/', at);
    if (slash == std::string::npos) slash = dir.size();
    path = dir.substr(0, slash);
    at = slash + 1;
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST)
      return Status::error("--checkpoint-dir " + dir + ": cannot create " + path + ": " +
                           std::strerror(errno));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::error("--checkpoint-dir " + dir + ": not a directory");
  return {};
}

// The settings in which two training configurations ("key=value; key=value") differ, as
// "key: old -> new" (a setting only one records: "(none)" on the other side).
std::vector<std::string> trainingChanges(const std::string &before, const std::string &now) {
  auto parse = [](const std::string &text) {
    std::map<std::string, std::string> out;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find("; ", start);
      std::string entry = text.substr(start, end == std::string::npos ? end : end - start);
      size_t eq = entry.find('=');
      if (eq != std::string::npos) out[entry.substr(0, eq)] = entry.substr(eq + 1);
      if (end == std::string::npos) break;
      start = end + 2;
    }
    return out;
  };
  std::vector<std::string> changes;
  if (before.empty() || now.empty() || before == now) return changes;
  std::map<std::string, std::string> a = parse(before), b = parse(now);
  for (const auto &[key, value] : a) {
    auto it = b.find(key);
    std::string other = it == b.end() ? "(none)" : it->second;
    if (other != value) changes.push_back(key + ": " + value + " -> " + other);
  }
  for (const auto &[key, value] : b)
    if (!a.count(key)) changes.push_back(key + ": (none) -> " + value);
  return changes;
}

// The first metric of a step that is not finite ("grad_norm is infinite"), or "". A finite loss
// with a non-finite gradient norm means the update just made the parameters non-finite.
std::string nonFiniteMetric(const StepMetrics &m) {
  auto what = [](const std::string &name, double v) {
    return name + " is " + (std::isnan(v) ? "NaN" : "infinite");
  };
  if (!std::isfinite(m.loss)) return what("the loss", m.loss);
  if (!std::isfinite(m.gradNorm)) return what("the gradient norm", m.gradNorm);
  if (!std::isfinite(m.lr)) return what("the learning rate", m.lr);
  for (const auto &[name, v] : m.extra)
    if (!std::isfinite(v)) return what(name, v);
  return "";
}

// The first parameter or optimizer-state value that is not finite ("parameter 'w1' holds NaN
// at element 3"), or "": what a checkpoint must never hold.
std::string firstNonFinite(const std::vector<CheckpointTensor> &tensors) {
  for (const CheckpointTensor &t : tensors) {
    const float *v = static_cast<const float *>(t.data);
    for (int64_t k = 0, n = elementCount(t.shape); v && k < n; ++k)
      if (!std::isfinite(v[k]))
        return (t.slot.empty() ? "parameter '" + t.name + "'"
                               : "optimizer state '" + t.slot + "' of '" + t.name + "'") +
               " holds " + (std::isnan(v[k]) ? "NaN" : "Inf") + " at element " +
               std::to_string(k);
  }
  return "";
}

class CheckpointWriter {
 public:
  // `lead`: this process writes (rank 0 of a data-parallel run; the others hold the same
  // params and state, or with --shard-optimizer their blocks of the state, which they hand to
  // rank 0 here, and only name the file).
  CheckpointWriter(const TrainOptions &options, const ProgramInfo &info,
                   const StepBuffers &buffers, const BatchSource &data, Reporter &reporter,
                   StepProgram &program, int rank)
      : options_(options), info_(info), data_(data), reporter_(reporter), program_(program),
        lead_(rank == 0), tensors_(info, buffers, rank) {}

  Status write(int64_t step) {
    std::string path = checkpointPath(options_.checkpointDir, step);
    if (Status s = writeTo(path, step); !s.ok()) return s;
    last_ = path;
    if (!lead_) return {};
    reporter_.note("checkpoint: " + path);
    // Keep the newest few; an old one that will not go away is not worth stopping for.
    std::vector<std::pair<int64_t, std::string>> all;
    if (listCheckpoints(options_.checkpointDir, all).ok()) {
      int keep = std::max(options_.keepCheckpoints, 1);
      for (size_t i = 0; i + keep < all.size(); ++i) ::unlink(all[i].second.c_str());
    }
    return {};
  }
  /// The best-validation checkpoint, beside the rotated ones (never removed by the rotation).
  Status writeBest(int64_t step, double valLoss) {
    std::string path = bestCheckpointPath(options_.checkpointDir);
    if (Status s = writeTo(path, step); !s.ok() || !lead_) return s;
    char text[64];
    std::snprintf(text, sizeof text, " (val loss %.4f after step %lld)", valLoss,
                  static_cast<long long>(step));
    reporter_.note("best checkpoint: " + path + text);
    return {};
  }
  const std::string &last() const { return last_; }
  /// "; the newest checkpoint (all finite) is PATH", or "" when none was written.
  std::string newestFinite() const {
    return last_.empty() ? "" : "; the newest checkpoint (all finite) is " + last_;
  }

 private:
  Status writeTo(const std::string &path, int64_t step) {
    const std::vector<CheckpointTensor> *tensors = nullptr;
    Status status = tensors_.forWrite(program_, tensors);
    if (status.ok() && lead_) status = writeTensors(path, step, *tensors);
    tensors_.release();
    return status;
  }
  Status writeTensors(const std::string &path, int64_t step,
                      const std::vector<CheckpointTensor> &tensors) {
    // Never a poisoned checkpoint: a NaN in it would be resumed from and recommended.
    if (std::string bad = firstNonFinite(tensors); !bad.empty())
      return Status::error("after step " + std::to_string(step) + ", " + bad +
                           "; not writing a checkpoint" + newestFinite());
    if (Status s = makeDirectories(options_.checkpointDir); !s.ok()) return s;
    CheckpointInfo ci;
    ci.fingerprint = info_.fingerprint;
    ci.training = info_.training;
    ci.step = static_cast<uint64_t>(step);
    ci.seed = data_.seed();
    ci.data = {data_.seed(), static_cast<uint64_t>(step), data_.identity()};
    if (Status s = writeCheckpoint(path, ci, tensors); !s.ok())
      return s.withContext("writing a checkpoint");
    return {};
  }

  const TrainOptions &options_;
  const ProgramInfo &info_;
  const BatchSource &data_;
  Reporter &reporter_;
  StepProgram &program_;
  bool lead_;
  CheckpointTensors tensors_;
  std::string last_;
};


// Loads the newest checkpoint of `dir` into `buffers`; `what` names the flag in errors.
Status resumeFrom(const std::string &dir, const char *what, const ProgramInfo &info,
                  const StepBuffers &buffers, int rank, CheckpointInfo &ci, std::string &path) {
  int64_t step;
  if (Status s = findLatestCheckpoint(dir, path, step); !s.ok()) return s;
  if (path.empty())
    return Status::error(std::string(what) + ": no checkpoint in '" + dir + "' (looked for " +
                         kCheckpointPrefix + "<step>" + kCheckpointSuffix + ")");
  CheckpointTensors tensors(info, buffers, rank);
  Status s = readCheckpoint(path, info.fingerprint, tensors.forRead(), ci).withContext(what);
  if (s.ok()) tensors.keepBlocks();
  tensors.release();
  return s;
}

// The mean loss under program.evaluate of batches 0..N-1: held-out ones, or training ones
// (eval --split train). What eval prints and train --eval-every records.
Status meanLoss(StepProgram &program, const BatchSource &data, const StepBuffers &buffers,
                int64_t batches, bool heldOut, double &mean) {
  double sum = 0;
  for (int64_t b = 0; b < batches; ++b) {
    Status filled = heldOut ? data.fillHeldOut(static_cast<uint64_t>(b), buffers.batch)
                            : data.fill(static_cast<uint64_t>(b), buffers.batch);
    if (!filled.ok()) return filled;
    double loss = 0;
    if (Status s = program.evaluate(buffers, b, loss); !s.ok()) return s;
    sum += loss;
  }
  mean = sum / static_cast<double>(batches);
  return {};
}

}  // namespace

std::string checkpointPath(const std::string &dir, int64_t step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%0*lld", kStepDigits, static_cast<long long>(step));
  return dir + "/" + kCheckpointPrefix + digits + kCheckpointSuffix;
}

Status findLatestCheckpoint(const std::string &dir, std::string &path, int64_t &step) {
  std::vector<std::pair<int64_t, std::string>> all;
  if (Status s = listCheckpoints(dir, all); !s.ok()) return s;
  path.clear();
  step = -1;
  if (!all.empty()) std::tie(step, path) = all.back();
  return {};
}

Status train(StepProgram &program, const TrainOptions &options, Reporter &reporter,
             TrainResult *result) {
  const ProgramInfo &info = program.info();
  if (Status s = validateProgramInfo(info); !s.ok()) return s;
  int64_t total = options.steps > 0 ? options.steps
                  : info.defaultSteps > 0 ? info.defaultSteps
                                          : 1000;
  if ((options.resume || options.checkpointEvery > 0) && options.checkpointDir.empty())
    return Status::error(std::string(options.resume ? "--resume" : "--checkpoint-every") +
                         " needs --checkpoint-dir");
  if (options.resume && !options.initFrom.empty())
    return Status::error("--init-from and --resume exclude each other: a resumed run takes its "
                         "parameters from the checkpoint");

  HostBuffers host(info, &program);
  const StepBuffers &buffers = host.views();
  uint64_t seed = options.seed;
  int64_t first = 0;
  std::string dataSource;
  if (options.resume) {
    CheckpointInfo ci;
    std::string path;
    if (Status s = resumeFrom(options.checkpointDir, "--resume", info, buffers,
                              program.ranks().rank, ci, path);
        !s.ok())
      return s;
    seed = ci.data.seed;
    first = static_cast<int64_t>(ci.step);
    dataSource = ci.data.source;
    if (ci.data.step != ci.step)
      return Status::error("--resume: " + path + ": the data position (step " +
                           std::to_string(ci.data.step) + ") disagrees with the step (" +
                           std::to_string(ci.step) + ")");
    reporter.note("resuming from " + path + " (step " + std::to_string(first) + ", seed " +
                  std::to_string(seed) + ")");
    // Another training configuration (lr, schedule, clipping, SAM ...) keeps the state's layout
    // and is allowed, but not silently: one line per setting that changed.
    for (const std::string &change : trainingChanges(ci.training, info.training))
      reporter.note("--resume: the training configuration changed: " + change);
  } else {
    if (!options.checkpointDir.empty()) {
      std::string path;
      int64_t step;
      if (Status s = findLatestCheckpoint(options.checkpointDir, path, step); !s.ok()) return s;
      if (!path.empty())
        return Status::error("--checkpoint-dir " + options.checkpointDir +
                             " already holds checkpoints of a run (the newest: " + path +
                             "); pass --resume to continue it, or choose another directory");
    }
    if (options.initFrom.empty()) {
      if (Status s = initParams(info, seed, buffers); !s.ok()) return s;
    } else if (Status s = loadParams(options.initFrom, info, buffers); !s.ok()) {
      return s;
    }
  }

  if (options.checkpointBest && (options.checkpointDir.empty() || options.evalEvery <= 0))
    return Status::error("--checkpoint-best needs --checkpoint-dir and --eval-every (it keeps "
                         "the checkpoint of the best validation loss)");
  if (options.evalEvery > 0 && options.evalBatches < 1)
    return Status::error("--eval-batches must be at least 1");
  BatchSource data;
  if (Status s = BatchSource::open(info.inputs, options.data, seed, options.valFraction, data);
      !s.ok())
    return s;
  if (options.evalEvery > 0 && !data.hasHeldOut())
    return Status::error("--eval-every: " + data.describeHeldOut() +
                         "; validation needs a held-out split (--val-fraction > 0)");
  if (options.evalEvery > 0 && !program.canEvaluate())
    return Status::error("--eval-every: this executable does not support eval");
  if (options.resume && data.identity() != dataSource)
    return Status::error("--resume: the checkpoint was trained on data '" + dataSource +
                         "', this run reads '" + data.identity() +
                         "'; resume with the same --data and --val-fraction (a resumed run "
                         "must see the same batches)");
  if (Status s = program.selectDevice(options.device); !s.ok()) return s.withContext("--device");
  if (Status s = program.setThreads(options.threads); !s.ok()) return s.withContext("--threads");
  if (Status s = program.setAllReduce(options.allReduce); !s.ok())
    return s.withContext("--all-reduce");

  // Every rank of a data-parallel run draws the whole batch (its step reads only its block
  // of micro-batches) and holds the same params and state; rank 0 writes them, and says
  // first what runs where.
  Ranks ranks = program.ranks();
  bool lead = ranks.rank == 0;
  if (lead && ranks.size > 1) {
    int64_t rows = info.inputs.empty() ? 0 : info.inputs[0].shape[0];
    int64_t k = info.dataParallelMicroBatches;
    reporter.note("data-parallel: " + std::to_string(ranks.size) + " ranks (" + ranks.launcher +
                  "), each on " + ranks.device + "; each step's batch of " +
                  std::to_string(rows) + " rows in " + std::to_string(k) + " micro-batches, " +
                  std::to_string(k / ranks.size) + " per rank, summed " + ranks.reduction +
                  (info.shardedOver > 0
                       ? "; the optimizer state split over the ranks (--shard-optimizer: each "
                         "updates its block of every sharded parameter, then they gather them)"
                       : ""));
  }
  CheckpointWriter checkpoints(options, info, buffers, data, reporter, program, ranks.rank);
  RunStart start;
  start.firstStep = first;
  start.totalSteps = total;
  start.tokensPerStep = data.tokensPerStep();
  start.rateUnit = data.countsTokens() ? "tok" : "ex";
  if (Status s = reporter.begin(start); !s.ok()) return s;
  if (first >= total)
    reporter.note("the checkpoint is at step " + std::to_string(first) + ", --steps is " +
                  std::to_string(total) + ": nothing to run");

  if (options.evalEvery > 0)
    reporter.note("validation every " + std::to_string(options.evalEvery) + " steps on " +
                  std::to_string(options.evalBatches) + " batches of " + data.describeHeldOut());
  TrainResult done;
  done.firstStep = first;
  // The mean held-out loss of the current parameters (no dropout, no update).
  auto validate = [&](double &mean) -> Status {
    if (Status s = program.syncToHost(buffers); !s.ok()) return s;
    return meanLoss(program, data, buffers, options.evalBatches, /*heldOut=*/true, mean);
  };
  int64_t lastWritten = options.resume ? first : -1;
  StepMetrics metrics;
  for (int64_t step = first; step < total; ++step) {
    if (Status s = data.fill(static_cast<uint64_t>(step), buffers.batch); !s.ok())
      return s.withContext("step " + std::to_string(step));
    metrics = StepMetrics();
    double t0 = reporter.now();
    if (Status s = program.run(buffers, step, metrics); !s.ok())
      return Status::error("step " + std::to_string(step) + ": " + s.message() +
                           (checkpoints.last().empty()
                                ? std::string()
                                : "; the newest checkpoint is " + checkpoints.last() +
                                      " (--resume continues from it)"));
    double seconds = reporter.now() - t0;
    if (step == first && step + 1 < total) profileWarmupDone();
    bool validating = options.evalEvery > 0 &&
                      ((step + 1) % options.evalEvery == 0 || step + 1 == total);
    double valLoss = 0;
    if (validating) {
      if (Status s = validate(valLoss); !s.ok())
        return s.withContext("validation after step " + std::to_string(step + 1));
      metrics.extra.emplace_back("val_loss", valLoss);
    }
    if (Status s = reporter.step(step, metrics, seconds); !s.ok()) return s;
    bool improved = validating && std::isfinite(valLoss) &&
                    (done.bestValStep < 0 || valLoss < done.bestValLoss);
    if (improved) {
      done.bestValLoss = valLoss;
      done.bestValStep = step + 1;
      if (options.checkpointBest && nonFiniteMetric(metrics).empty())
        if (Status s = checkpoints.writeBest(step + 1, valLoss); !s.ok()) return s;
    }
    done.lastLoss = metrics.loss;
    if (std::string bad = nonFiniteMetric(metrics); !bad.empty()) {
      (void)reporter.finish();
      return Status::error("step " + std::to_string(step) + ": " + bad +
                           "; stopping (try a lower learning rate or gradient clipping" +
                           (checkpoints.last().empty()
                                ? std::string()
                                : ", or resume from " + checkpoints.last() +
                                      ", whose values are all finite") +
                           ")");
    }
    bool stop = options.interrupted && *options.interrupted;
    if (!options.checkpointDir.empty() &&
        (stop || (options.checkpointEvery > 0 && (step + 1) % options.checkpointEvery == 0))) {
      if (Status s = program.syncToHost(buffers); !s.ok()) return s;
      if (Status s = checkpoints.write(step + 1); !s.ok()) return s;
      lastWritten = step + 1;
    }
    if (stop && step + 1 < total) {
      (void)reporter.finish();
      return Status::error(
          "interrupted after step " + std::to_string(step + 1) + " of " + std::to_string(total) +
          (checkpoints.last().empty()
               ? std::string("; no --checkpoint-dir, so nothing was saved")
               : "; checkpoint " + checkpoints.last() + " (continue with --resume)"));
    }
  }
  int64_t end = std::max(first, total);
  // The program may keep params and state elsewhere between steps (the CUDA step).
  if (Status s = program.syncToHost(buffers); !s.ok()) return s;
  if (!options.checkpointDir.empty() && lastWritten != end)
    if (Status s = checkpoints.write(end); !s.ok()) return s;
  if (!options.saveParams.empty() && lead) {
    if (std::string bad = firstNonFinite(paramTensors(info, buffers)); !bad.empty())
      return Status::error("after step " + std::to_string(end) + ", " + bad +
                           "; not writing --save-params " + options.saveParams);
    if (Status s = saveParams(options.saveParams, info, buffers, end); !s.ok()) return s;
    reporter.note("parameters: " + options.saveParams);
  }
  if (done.bestValStep >= 0) {
    char text[96];
    std::snprintf(text, sizeof text, "best val loss %.4f after step %lld", done.bestValLoss,
                  static_cast<long long>(done.bestValStep));
    reporter.note(text);
  }
  if (!options.saveGrads.empty() && lead) {
    const std::vector<std::vector<float>> *grads = program.lastGradients();
    if (!grads || grads->size() != info.params.size())
      return Status::error("--save-grads: " +
                           std::string(end > first ? "this executable does not return gradients; "
                                                     "compile it with stepc compile --export-grads"
                                                   : "no step ran, so there are no gradients"));
    std::vector<TensorView> views;
    for (size_t i = 0; i < info.params.size(); ++i)
      views.push_back({info.params[i].name, DType::kF32, info.params[i].shape, (*grads)[i].data()});
    if (Status s = writeSafetensors(options.saveGrads, views,
                                    {{"stepc.step", std::to_string(end - 1)},
                                     {"stepc.what", "gradients of the step, before clipping"}});
        !s.ok())
      return s.withContext("--save-grads");
    reporter.note("gradients of step " + std::to_string(end - 1) + ": " + options.saveGrads);
  }
  if (Status s = reporter.finish(); !s.ok()) return s;
  done.endStep = end;
  done.lastCheckpoint = checkpoints.last();
  if (result) *result = done;
  return {};
}

std::string bestCheckpointPath(const std::string &dir) { return dir + "/best.safetensors"; }

namespace {

Status evaluateWith(StepProgram &program, const EvalOptions &options, const StepBuffers &buffers,
                    double &mean, std::string *split) {
  const ProgramInfo &info = program.info();
  BatchSource data;
  if (Status s = BatchSource::open(info.inputs, options.data, options.seed, options.valFraction,
                                   data);
      !s.ok())
    return s;
  if (!options.trainingSplit && !data.hasHeldOut())
    return Status::error("eval: " + data.describeHeldOut() +
                         "; pass --split train to score training batches, or a --val-fraction");
  if (split)
    *split = options.trainingSplit ? "training batches 0.." + std::to_string(options.batches - 1) +
                                         " of seed " + std::to_string(options.seed)
                                   : "held out: " + data.describeHeldOut();
  if (Status s = program.selectDevice(options.device); !s.ok()) return s.withContext("--device");
  if (Status s = program.setThreads(options.threads); !s.ok()) return s.withContext("--threads");
  return meanLoss(program, data, buffers, options.batches, !options.trainingSplit, mean);
}

}  // namespace

Status withParameters(const ProgramInfo &info, const std::string &checkpointDir,
                      const std::string &initFrom, uint64_t seed,
                      const std::function<Status(const StepBuffers &)> &use,
                      StepProgram *program) {
  if (Status s = validateProgramInfo(info); !s.ok()) return s;
  if (!initFrom.empty() && !checkpointDir.empty())
    return Status::error("--init-from and --checkpoint-dir exclude each other");
  HostBuffers host(info, program);
  const StepBuffers &buffers = host.views();
  if (!checkpointDir.empty()) {
    CheckpointInfo ci;
    std::string path;
    if (Status s = resumeFrom(checkpointDir, "--checkpoint-dir", info, buffers,
                              program ? program->ranks().rank : 0, ci, path);
        !s.ok())
      return s;
  } else if (!initFrom.empty()) {
    if (Status s = loadParams(initFrom, info, buffers); !s.ok()) return s;
  } else if (Status s = initParams(info, seed, buffers); !s.ok()) {
    return s;
  }
  return use(buffers);
}

Status evaluate(StepProgram &program, const EvalOptions &options, double &meanLoss,
                std::string *split) {
  if (options.batches < 1) return Status::error("--batches must be at least 1");
  return withParameters(program.info(), options.checkpointDir, options.initFrom, options.seed,
                        [&](const StepBuffers &buffers) {
                          return evaluateWith(program, options, buffers, meanLoss, split);
                        },
                        &program);
}

}  // namespace stepc::rt
