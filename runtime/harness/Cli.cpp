//===- Cli.cpp - the training executable's command line ------------------===//
#include "runtime/harness/Cli.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <set>

namespace stepc::rt {
namespace {

// A decimal integer in [min, max]: digits only (no sign, space or suffix).
bool parseInteger(const std::string &text, uint64_t min, uint64_t max, uint64_t &out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - d) / 10) return false;
    value = value * 10 + d;
  }
  if (value < min || value > max) return false;
  out = value;
  return true;
}

const char *commandName(Command command) {
  switch (command) {
    case Command::kTrain: return "train";
    case Command::kEval: return "eval";
    case Command::kInfo: return "info";
    case Command::kSample: return "sample";
    case Command::kHelp: break;
  }
  return "help";
}

// One flag of a command: whether it takes a value, and what to do with it.
struct Flag {
  const char *name;
  bool takesValue;
  std::function<Status(const std::string &)> apply;
};

Status integerFlag(const std::string &flag, const std::string &value, uint64_t min, uint64_t max,
                   const char *expected, uint64_t &out) {
  if (!parseInteger(value, min, max, out))
    return Status::error(flag + ": expected " + expected + ", found '" + value + "'");
  return {};
}

// A number in [min, max], either end open on request: the whole text must be a number.
Status numberFlag(const std::string &flag, const std::string &value, double min, double max,
                  bool openMin, bool openMax, const char *expected, double &out) {
  char *end = nullptr;
  errno = 0;
  double v = value.empty() ? std::nan("") : std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno != 0 || !(v >= min && v <= max) ||
      (openMin && v == min) || (openMax && v == max))
    return Status::error(flag + ": expected " + expected + ", found '" + value + "'");
  out = v;
  return {};
}

// --val-fraction, of train and eval alike.
Status fractionFlag(const std::string &flag, const std::string &value, double &out) {
  return numberFlag(flag, value, 0.0, 1.0, false, true, "a fraction in [0, 1) such as 0.05", out);
}

Status deviceFlag(const std::string &value, std::string &out) {
  if (value != "cpu" && value != "cuda" && value != "auto")
    return Status::error("--device: expected cpu, cuda or auto, found '" + value + "'");
  out = value;
  return {};
}

Status pathFlag(const std::string &flag, const std::string &value, std::string &out) {
  if (value.empty()) return Status::error(flag + ": expected a file name, found ''");
  out = value;
  return {};
}

}  // namespace

Status parseCommandLine(const std::vector<std::string> &args, CommandLine &out) {
  CommandLine cl;
  if (args.empty()) {
    out = cl;
    return Status::error("no command given: expected train, eval, sample, info or --help");
  }
  const std::string &word = args[0];
  if (word == "--help" || word == "-h" || word == "help") {
    cl.command = Command::kHelp;
    if (word == "help" && args.size() > 1) {
      const std::string &topic = args[1];
      if (topic == "train") cl.helpFor = Command::kTrain;
      else if (topic == "eval") cl.helpFor = Command::kEval;
      else if (topic == "info") cl.helpFor = Command::kInfo;
      else if (topic == "sample") cl.helpFor = Command::kSample;
      else return Status::error("help: unknown command '" + topic + "' (expected train, eval, sample or info)");
      if (args.size() > 2) return Status::error("help: unexpected argument '" + args[2] + "'");
    } else if (args.size() > 1) {
      return Status::error(word + ": unexpected argument '" + args[1] + "'");
    }
    out = cl;
    return {};
  }
  if (word == "train") cl.command = Command::kTrain;
  else if (word == "eval") cl.command = Command::kEval;
  else if (word == "info") cl.command = Command::kInfo;
  else if (word == "sample") cl.command = Command::kSample;
  else if (!word.empty() && word[0] == '-')
    return Status::error("expected a command (train, eval, sample, info) before the flag '" + word + "'");
  else
    return Status::error("unknown command '" + word + "' (expected train, eval, sample, info or --help)");

  TrainOptions &t = cl.train;
  EvalOptions &e = cl.eval;
  SampleOptions &sm = cl.sample;
  uint64_t v = 0;
  const uint64_t kMaxSteps = uint64_t{1} << 53;  // a step is exact in the f64 schedules
  std::vector<Flag> flags;
  if (cl.command == Command::kTrain) {
    flags = {
        {"--data", true, [&](const std::string &x) { return pathFlag("--data", x, t.data); }},
        {"--steps", true,
         [&](const std::string &x) {
           Status s = integerFlag("--steps", x, 1, kMaxSteps, "a positive integer", v);
           t.steps = static_cast<int64_t>(v);
           return s;
         }},
        {"--seed", true,
         [&](const std::string &x) {
           return integerFlag("--seed", x, 0, UINT64_MAX, "an integer in [0, 2^64)", t.seed);
         }},
        {"--threads", true,
         [&](const std::string &x) {
           Status s = integerFlag("--threads", x, 1, 4096, "a thread count in [1, 4096]", v);
           t.threads = static_cast<int>(v);
           return s;
         }},
        {"--device", true, [&](const std::string &x) { return deviceFlag(x, t.device); }},
        {"--checkpoint-dir", true,
         [&](const std::string &x) {
           if (x.empty()) return Status::error("--checkpoint-dir: expected a directory, found ''");
           t.checkpointDir = x;
           return Status();
         }},
        {"--checkpoint-every", true,
         [&](const std::string &x) {
           Status s = integerFlag("--checkpoint-every", x, 1, kMaxSteps,
                                  "a positive number of steps", v);
           t.checkpointEvery = static_cast<int64_t>(v);
           return s;
         }},
        {"--resume", false,
         [&](const std::string &) {
           t.resume = true;
           return Status();
         }},
        {"--all-reduce", true,
         [&](const std::string &x) {
           if (x != "tree" && x != "fast")
             return Status::error("--all-reduce: expected tree or fast, found '" + x + "'");
           t.allReduce = x;
           return Status();
         }},
        {"--metrics", true,
         [&](const std::string &x) { return pathFlag("--metrics", x, cl.metricsPath); }},
        {"--init-from", true,
         [&](const std::string &x) { return pathFlag("--init-from", x, t.initFrom); }},
        {"--save-params", true,
         [&](const std::string &x) { return pathFlag("--save-params", x, t.saveParams); }},
        {"--save-grads", true,
         [&](const std::string &x) { return pathFlag("--save-grads", x, t.saveGrads); }},
        {"--val-fraction", true,
         [&](const std::string &x) { return fractionFlag("--val-fraction", x, t.valFraction); }},
        {"--eval-every", true,
         [&](const std::string &x) {
           Status s = integerFlag("--eval-every", x, 1, kMaxSteps, "a positive number of steps", v);
           t.evalEvery = static_cast<int64_t>(v);
           return s;
         }},
        {"--eval-batches", true,
         [&](const std::string &x) {
           Status s = integerFlag("--eval-batches", x, 1, kMaxSteps, "a positive integer", v);
           t.evalBatches = static_cast<int64_t>(v);
           return s;
         }},
        {"--checkpoint-best", false,
         [&](const std::string &) {
           t.checkpointBest = true;
           return Status();
         }},
    };
  } else if (cl.command == Command::kEval) {
    flags = {
        {"--data", true, [&](const std::string &x) { return pathFlag("--data", x, e.data); }},
        {"--seed", true,
         [&](const std::string &x) {
           return integerFlag("--seed", x, 0, UINT64_MAX, "an integer in [0, 2^64)", e.seed);
         }},
        {"--threads", true,
         [&](const std::string &x) {
           Status s = integerFlag("--threads", x, 1, 4096, "a thread count in [1, 4096]", v);
           e.threads = static_cast<int>(v);
           return s;
         }},
        {"--device", true, [&](const std::string &x) { return deviceFlag(x, e.device); }},
        {"--batches", true,
         [&](const std::string &x) {
           Status s = integerFlag("--batches", x, 1, kMaxSteps, "a positive integer", v);
           e.batches = static_cast<int64_t>(v);
           return s;
         }},
        {"--init-from", true,
         [&](const std::string &x) { return pathFlag("--init-from", x, e.initFrom); }},
        {"--checkpoint-dir", true,
         [&](const std::string &x) {
           if (x.empty()) return Status::error("--checkpoint-dir: expected a directory, found ''");
           e.checkpointDir = x;
           return Status();
         }},
        {"--val-fraction", true,
         [&](const std::string &x) { return fractionFlag("--val-fraction", x, e.valFraction); }},
        {"--split", true,
         [&](const std::string &x) {
           if (x != "val" && x != "train")
             return Status::error("--split: expected val or train, found '" + x + "'");
           e.trainingSplit = x == "train";
           return Status();
         }},
    };
  }

  if (cl.command == Command::kSample) {
    flags = {
        {"--checkpoint-dir", true,
         [&](const std::string &x) {
           if (x.empty()) return Status::error("--checkpoint-dir: expected a directory, found ''");
           sm.checkpointDir = x;
           return Status();
         }},
        {"--init-from", true,
         [&](const std::string &x) { return pathFlag("--init-from", x, sm.initFrom); }},
        {"--prompt", true,
         [&](const std::string &x) {
           sm.prompt = x;
           return Status();
         }},
        {"--tokenizer", true,
         [&](const std::string &x) { return pathFlag("--tokenizer", x, sm.tokenizer); }},
        {"--prompt-ids", true,
         [&](const std::string &x) {
           sm.hasPromptIds = true;
           size_t begin = 0;
           while (begin <= x.size()) {
             size_t end = x.find(',', begin);
             std::string id = x.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
             uint64_t token;
             if (!parseInteger(id, 0, INT64_MAX, token))
               return Status::error("--prompt-ids: expected token ids like 1,2,3, found '" + x + "'");
             sm.promptIds.push_back(static_cast<int64_t>(token));
             if (end == std::string::npos) break;
             begin = end + 1;
           }
           return Status();
         }},
        {"--tokens", true,
         [&](const std::string &x) {
           Status s = integerFlag("--tokens", x, 1, uint64_t{1} << 32, "a positive integer", v);
           sm.tokens = static_cast<int64_t>(v);
           return s;
         }},
        {"--temperature", true,
         [&](const std::string &x) {
           return numberFlag("--temperature", x, 0.0, 1e6, false, false,
                             "a number >= 0 (0: greedy)", sm.temperature);
         }},
        {"--top-k", true,
         [&](const std::string &x) {
           Status s = integerFlag("--top-k", x, 0, uint64_t{1} << 32, "an integer >= 0 (0: all)", v);
           sm.topK = static_cast<int64_t>(v);
           return s;
         }},
        {"--top-p", true,
         [&](const std::string &x) {
           return numberFlag("--top-p", x, 0.0, 1.0, true, false, "a probability in (0, 1]",
                             sm.topP);
         }},
        {"--seed", true,
         [&](const std::string &x) {
           return integerFlag("--seed", x, 0, UINT64_MAX, "an integer in [0, 2^64)", sm.seed);
         }},
        {"--full-window", false,
         [&](const std::string &) {
           sm.fullWindow = true;
           return Status();
         }},
        {"--samples", true,
         [&](const std::string &x) {
           Status s = integerFlag("--samples", x, 1, 1 << 20, "a positive integer", v);
           sm.samples = static_cast<int64_t>(v);
           return s;
         }},
        {"--threads", true,
         [&](const std::string &x) {
           Status s = integerFlag("--threads", x, 1, 4096, "a thread count in [1, 4096]", v);
           sm.threads = static_cast<int>(v);
           return s;
         }},
    };
  }

  std::set<std::string> seen;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--help" || arg == "-h") {
      cl.helpFor = cl.command;
      cl.command = Command::kHelp;
      out = cl;
      return {};
    }
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
      return Status::error(std::string(commandName(cl.command)) + ": unexpected argument '" +
                           arg + "' (flags start with --)");
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    const Flag *flag = nullptr;
    for (const Flag &f : flags)
      if (name == f.name) flag = &f;
    if (!flag)
      return Status::error("unknown flag '" + name + "' for '" + commandName(cl.command) +
                           "' (see '" + commandName(cl.command) + " --help')");
    if (!seen.insert(name).second) return Status::error(name + ": given more than once");
    std::string value;
    if (!flag->takesValue) {
      if (eq != std::string::npos)
        return Status::error(name + ": takes no value, found '" + arg.substr(eq + 1) + "'");
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return Status::error(name + ": expected a value after it, found the end of the command line");
    }
    if (Status s = flag->apply(value); !s.ok()) return s;
  }

  if (cl.command == Command::kTrain) {
    if (t.resume && t.checkpointDir.empty())
      return Status::error("--resume: needs --checkpoint-dir (where the checkpoints are)");
    if (t.checkpointEvery > 0 && t.checkpointDir.empty())
      return Status::error("--checkpoint-every: needs --checkpoint-dir (where to write them)");
    if (t.resume && !t.initFrom.empty())
      return Status::error("--init-from: cannot be combined with --resume (a resumed run takes "
                           "its parameters from the checkpoint)");
    if (t.checkpointBest && (t.checkpointDir.empty() || t.evalEvery == 0))
      return Status::error("--checkpoint-best: needs --checkpoint-dir and --eval-every (it keeps "
                           "the checkpoint of the best validation loss)");
    if (seen.count("--eval-batches") && t.evalEvery == 0)
      return Status::error("--eval-batches: needs --eval-every (when to validate)");
  }
  if (cl.command == Command::kEval && !e.initFrom.empty() && !e.checkpointDir.empty())
    return Status::error("--init-from: cannot be combined with --checkpoint-dir (both give the "
                         "parameters)");
  out = cl;
  return {};
}

std::string usageText(const std::string &program, Command command) {
  const std::string &p = program;
  switch (command) {
    case Command::kTrain:
      return "usage: " + p + " train [flags]\n"
             "Trains the model; with no --data, on built-in generated data.\n"
             "  --data FILE            token data: raw bytes of any file, or an llm.c .bin shard\n"
             "  --steps N              total steps to train (a resumed run continues to N)\n"
             "  --seed S               seed of the initial parameters and the data (default 0)\n"
             "  --threads T            threads the step may use (default: the program's choice)\n"
             "  --device D             cpu, cuda or auto (default): where the step runs. auto\n"
             "                         takes the GPU when the executable has a CUDA step\n"
             "                         (stepc compile --target=cuda) and one is there, else the\n"
             "                         CPU; cuda stops with what GPU there is when it cannot\n"
             "  --checkpoint-dir D     write checkpoints to D (at the end, and see below)\n"
             "  --checkpoint-every N   also checkpoint every N steps\n"
             "  --resume               continue from the newest checkpoint in D, bit-identically\n"
             "  --all-reduce M         under mpirun: tree (the CPU's default: a fixed order, the\n"
             "                         bits of one process) or fast (MPI_Allreduce, or NCCL's\n"
             "                         on CUDA, the only choice there: the library's order,\n"
             "                         equal to float32 rounding)\n"
             "  --metrics FILE.jsonl   one JSON object per step: step, loss, lr, grad_norm,\n"
             "                         tokens_per_s, step_ms, ...\n"
             "  --init-from F          initial parameters from a safetensors file, by name (F32,\n"
             "                         F16, BF16 or F64; finite). Matmul weights are [in, out]:\n"
             "                         PyTorch's nn.Linear.weight is [out, in], transpose it\n"
             "  --save-params F        write the final parameters to a safetensors file\n"
             "  --save-grads F         write the last step's gradients (before clipping) by\n"
             "                         parameter name (needs stepc compile --export-grads)\n"
             "  --val-fraction F       hold out the last F of --data (default 0.05, at least one\n"
             "                         window; 0: none); training never reads it. Built-in data\n"
             "                         has its own held-out stream\n"
             "  --eval-every N         every N steps and at the end, the mean loss of held-out\n"
             "                         batches (no dropout): val_loss in the metrics and the\n"
             "                         progress line; the run ends naming the best and its step\n"
             "  --eval-batches M       held-out batches per validation (default 10)\n"
             "  --checkpoint-best      keep D/best.safetensors, the checkpoint of the best val\n"
             "                         loss, beside the newest ones (needs --eval-every)\n"
             "Environment: STEPC_PROFILE=1 prints a per-kernel time profile at exit (compiled\n"
             "executables); --threads sets the threads of loop kernels and GEMMs alike.\n";
    case Command::kEval:
      return "usage: " + p + " eval [flags]\n"
             "Prints the mean loss over held-out batches (no dropout, no update).\n"
             "  --data FILE            token data (as for train)\n"
             "  --val-fraction F       the held-out tail of --data (default 0.05; give the value\n"
             "                         training used). Held-out batches read consecutive windows\n"
             "                         of it; built-in data has its own held-out stream\n"
             "  --split S              val (default): the held-out split; train: training\n"
             "                         batches 0..N-1 of --seed, as training drew them\n"
             "  --seed S               seed of the batches (and of the initial parameters)\n"
             "  --threads T            threads the step may use\n"
             "  --device D             cpu, cuda or auto (default), as for train\n"
             "  --batches N            batches to average (default 10)\n"
             "  --init-from F          parameters from a safetensors file\n"
             "  --checkpoint-dir D     parameters of the newest checkpoint in D\n";
    case Command::kSample:
      return "usage: " + p + " sample [flags]\n"
             "Generates text with a language model, streaming it as it is made. Each sample is\n"
             "one row of the model's batch: its window (the sequence length) holds the prompt\n"
             "from its first position (an empty prompt starts from token 0) and the tokens as\n"
             "they are added; when it is full it starts again from its last half.\n"
             "  --checkpoint-dir D     parameters of the newest checkpoint in D\n"
             "  --init-from F          parameters from a safetensors file (neither: the initial\n"
             "                         parameters of --seed, an untrained model)\n"
             "  --prompt TEXT          the start, as bytes (byte-level models); at most the window\n"
             "  --prompt-ids 1,2,3     the start as token ids (any vocabulary; printed as ids)\n"
             "  --tokenizer FILE       llm.c's gpt2_tokenizer.bin: text in and out for token\n"
             "                         models (the prompt is encoded greedily, longest token\n"
             "                         first: the file holds no BPE merges)\n"
             "  --tokens N             tokens to generate (default 200)\n"
             "  --temperature T        softmax temperature, >= 0 (default 1; 0: the most likely)\n"
             "  --top-k K              draw among the K most likely tokens (default 0: all)\n"
             "  --top-p P              and among the fewest whose probability reaches P (default 1)\n"
             "  --seed S               the draws (Philox; the same seed gives the same text)\n"
             "  --samples M            samples generated together, up to the batch (default 1)\n"
             "  --threads T            threads the forward may use\n"
             "  --full-window          recompute the whole window for each token even when the\n"
             "                         model can feed one position at a time (same tokens)\n"
             "It runs the forward on the CPU step. A model whose ops allow it (causal\n"
             "convolutions, running sums, attention with a key/value cache; `info` says) feeds\n"
             "one position per token, carrying their state; others recompute the whole window.\n";
    case Command::kInfo:
      return "usage: " + p + " info\n"
             "Prints the model: parameters, optimizer state, inputs, FLOPs per step, planned\n"
             "memory and kernel count.\n";
    case Command::kHelp:
      break;
  }
  return "usage: " + p + " COMMAND [flags]\n"
         "Commands:\n"
         "  train   train the model (" + p + " train --help for its flags)\n"
         "  eval    the loss of parameters on a few batches\n"
         "  sample  generate text with a language model (" + p + " sample --help)\n"
         "  info    parameters, FLOPs per step, planned memory, kernel count\n"
         "  help    this text; '" + p + " help COMMAND' for a command's flags\n";
}

}  // namespace stepc::rt
