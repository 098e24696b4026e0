//===- ObjectEmitter.cpp - the `llvm` stage to x86 object code ------------===//
#include "compiler/Codegen/LLVMCPU/ObjectEmitter.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Transforms/Utils/SplitModule.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Export.h"

namespace stepc::codegen {
namespace {

// A part of the module per thread, when it has this many functions per part at least (a tiny
// module is not worth the bitcode round trip), and at most this many parts.
constexpr int kFunctionsPerPart = 16;
constexpr int kMaxParts = 8;

// The instruction-set extensions a binary may need that an x86-64 CPU may lack, by the names
// both LLVM and the runtime's check (runtime/hal/CpuCheck.h, GCC's __builtin_cpu_supports)
// use. The executable records those its code was generated with, and refuses to start on a CPU
// without one of them instead of dying of SIGILL.
constexpr const char *kCheckedCpuFeatures[] = {
    "sse4.2",   "avx",      "avx2",     "fma",        "bmi2",        "f16c",
    "avx512f",  "avx512bw", "avx512dq", "avx512vl",   "avx512vnni",  "avx512bf16",
};

// @stepc_cpu_requirements = "CPU:feature,feature,..." (weak: the CUDA step's host object carries
// the same string).
void embedCpuRequirements(llvm::Module &module, const llvm::TargetMachine &machine,
                          llvm::StringRef cpu) {
  std::string text = cpu.str() + ":";
  bool first = true;
  for (const char *feature : kCheckedCpuFeatures)
    if (machine.getMCSubtargetInfo()->checkFeatures(std::string("+") + feature)) {
      text += (first ? "" : ",") + std::string(feature);
      first = false;
    }
  llvm::Constant *value = llvm::ConstantDataArray::getString(module.getContext(), text);
  auto *global = new llvm::GlobalVariable(module, value->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::WeakAnyLinkage, value,
                                          "stepc_cpu_requirements");
  global->setAlignment(llvm::Align(1));
}

// LLVM's default pipeline at `optLevel`, with glibc's vector math library (libmvec) known to
// the vectorizers: a kernel's tanhf / expf / logf calls (GELU, softmax, the norms) become 8-wide
// AVX2 calls instead of one scalar libm call per element, which made the tanh-GELU of a
// [4096, 512] activation take 30 ms (10 ns an element) on this machine. libmvec's functions
// are within 4 ulp, as libm's are; the executable links -lmvec (Linker.cpp).
void optimize(llvm::Module &module, llvm::TargetMachine &machine, unsigned optLevel) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = optLevel > 1;
  tuning.SLPVectorization = optLevel > 1;
  tuning.LoopUnrolling = optLevel > 0;
  llvm::PassBuilder builder(&machine, tuning);
  llvm::Triple triple(module.getTargetTriple());
  llvm::TargetLibraryInfoImpl library(triple);
  library.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  // LLVM 19's libmvec table stops at exp, log, pow, sin, cos, tan: the rest of what kernels
  // call (GELU's tanhf and erff, log1pf, expm1f) is in glibc >= 2.35 under the same vector ABI
  // names, 8 lanes for AVX2 and 16 for AVX-512 (only when the target has it).
  struct Variants { const char *scalar, *avx2, *avx512; };
  static constexpr Variants kMore[] = {
      {"tanhf", "_ZGVdN8v_tanhf", "_ZGVeN16v_tanhf"},
      {"erff", "_ZGVdN8v_erff", "_ZGVeN16v_erff"},
      {"log1pf", "_ZGVdN8v_log1pf", "_ZGVeN16v_log1pf"},
      {"expm1f", "_ZGVdN8v_expm1f", "_ZGVeN16v_expm1f"}};
  bool avx512 = llvm::StringRef(machine.getTargetFeatureString()).contains("+avx512f");
  std::vector<llvm::VecDesc> more;
  for (const Variants &fn : kMore) {
    more.emplace_back(fn.scalar, fn.avx2, llvm::ElementCount::getFixed(8), false, "_ZGV_LLVM_N8v");
    if (avx512)
      more.emplace_back(fn.scalar, fn.avx512, llvm::ElementCount::getFixed(16), false,
                        "_ZGV_LLVM_N16v");
  }
  library.addVectorizableFunctions(more);
  functions.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::OptimizationLevel level = optLevel >= 3   ? llvm::OptimizationLevel::O3
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                                  : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager pipeline = level == llvm::OptimizationLevel::O0
                                         ? builder.buildO0DefaultPipeline(level)
                                         : builder.buildPerModuleDefaultPipeline(level);
  pipeline.run(module, modules);
}

// Runs the backend (instruction selection, scheduling, register allocation) on `module`
// into an object file at `path`; "" or the error.
std::string codegen(llvm::Module &module, llvm::TargetMachine &machine, const std::string &path) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec) return "cannot write '" + path + "': " + ec.message();
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    return "the target cannot emit object files";
  passes.run(module);
  out.flush();
  if (out.has_error()) return "cannot write '" + path + "'";
  return "";
}

// LLVM's full unrolling runs before its loop vectorizer. A kernel's innermost loop over a
// contiguous axis of 32 (byte_lm's [16, 256, 32] activations) was unrolled whole, which left
// the row loop around it innermost: the vectorizer then vectorized across rows, with gathers
// and scatters 32 elements apart (1248 of them in byte_lm_residual_small's kernels), and those
// kernels ran at 10 GB/s instead of 46. Capped at 8 iterations, full unrolling still removes
// the loops over a few taps or lanes and leaves the contiguous ones to the vectorizer. The cap
// holds while this compiler's CPU pipelines run (unless the user set the option) and is
// lifted after, so another pipeline in the process (the GPU's) sees LLVM's default.
class ScopedFullUnrollCap {
 public:
  ScopedFullUnrollCap() {
    auto &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("unroll-full-max-count");
    if (it == options.end() || it->second->getNumOccurrences() > 0) return;
    if (!it->second->addOccurrence(0, it->second->ArgStr, "8")) option_ = it->second;
  }
  ~ScopedFullUnrollCap() {
    if (option_) option_->reset();
  }
  ScopedFullUnrollCap(const ScopedFullUnrollCap &) = delete;
  ScopedFullUnrollCap &operator=(const ScopedFullUnrollCap &) = delete;

 private:
  llvm::cl::Option *option_ = nullptr;
};

}  // namespace

mlir::LogicalResult emitObject(mlir::ModuleOp module, const std::string &path,
                               const ObjectOptions &options, std::vector<std::string> &objects) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return module.emitError("no LLVM target for '") << triple << "': " << error;
  std::string cpu = options.cpu;
  llvm::SubtargetFeatures features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
  }
  llvm::TargetOptions targetOptions;
  llvm::CodeGenOptLevel level = options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
                                : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                                        : llvm::CodeGenOptLevel::None;
  // The medium code model puts large data (the arena: gpt2_124m's is 3.8 GB) in .lbss with
  // 64-bit addressing; under the default small model, data past 2 GiB cannot be reached and
  // the executable does not link.
  auto makeMachine = [&] {
    return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
        triple, cpu, features.getString(), targetOptions, llvm::Reloc::PIC_,
        llvm::CodeModel::Medium, level));
  };
  std::unique_ptr<llvm::TargetMachine> machine = makeMachine();
  if (!machine) return module.emitError("cannot create a target machine for CPU '") << cpu << "'";

  // The description already lives in @stepc_program_description; the attribute has no LLVM
  // meaning.
  module->removeAttr("step.program");
  // Likewise the step.* argument attributes (role, name) that say what each buffer is. A
  // kernel's arguments that never share memory with its others (--step-kernel-noalias, which
  // names their aligned pointers' positions) become LLVM `noalias`.
  module.walk([](mlir::LLVM::LLVMFuncOp fn) {
    fn.removeArgAttrsAttr();
    fn.removeResAttrsAttr();
    auto noalias = fn->getAttrOfType<mlir::DenseI64ArrayAttr>("step.noalias_args");
    if (!noalias) return;
    for (int64_t position : noalias.asArrayRef())
      if (position >= 0 && position < static_cast<int64_t>(fn.getNumArguments()) &&
          llvm::isa<mlir::LLVM::LLVMPointerType>(fn.getArgument(position).getType()))
        fn.setArgAttr(static_cast<unsigned>(position), mlir::LLVM::LLVMDialect::getNoAliasAttrName(),
                      mlir::UnitAttr::get(fn.getContext()));
    fn->removeAttr("step.noalias_args");
  });
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule = mlir::translateModuleToLLVMIR(module, context, "stepc");
  if (!llvmModule) return module.emitError("translation to LLVM IR failed");
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  embedCpuRequirements(*llvmModule, *machine, cpu);

  // LLVM's optimiser and backend take most of the compile time and work mostly one function
  // at a time, so the module is split into parts, each optimised and compiled to its own
  // object file on its own thread in its own context (what LLVM's parallel LTO does);
  // SplitModule balances the parts by their number of functions. The host plan reaches the
  // kernels through the thread pool's function pointers (never inlined) and kernels call only
  // the math library, so no inlining is lost; local symbols become hidden external ones, which
  // stops interprocedural constant propagation from specialising a kernel by its range task
  // (keeping the two together measured no faster: benchmarks/README.md, compile time).
  int parts = options.threads > 0 ? options.threads
                                  : static_cast<int>(std::thread::hardware_concurrency());
  int functions = 0;
  for (const llvm::Function &f : *llvmModule) functions += !f.isDeclaration();
  parts = std::clamp(std::min(parts, functions / kFunctionsPerPart), 1, kMaxParts);
  objects.clear();
  ScopedFullUnrollCap unrollCap;
  if (parts == 1) {
    // Interprocedural constant propagation stays out of the kernels here too (the parts' local
    // symbols become external ones): a kernel called once had its arena pointers propagated
    // into it as constants, and with them went the `noalias` of its arguments (a gather
    // reloaded its row index for every element: kernel_noalias.test compiles with one backend
    // thread). Listed in llvm.compiler.used, a function's address counts as taken, which is
    // what keeps IPSCCP from tracking its arguments; its symbol stays local (a CUDA
    // executable links two objects that both define the step's entry points locally).
    std::vector<llvm::GlobalValue *> kernels;
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration() && f.hasLocalLinkage()) kernels.push_back(&f);
    llvm::appendToCompilerUsed(*llvmModule, kernels);
    optimize(*llvmModule, *machine, options.optLevel);
    if (std::string error = codegen(*llvmModule, *machine, path); !error.empty())
      return module.emitError(error);
    objects.push_back(path);
    return mlir::success();
  }
  std::vector<llvm::SmallVector<char, 0>> bitcode;
  llvm::SplitModule(
      *llvmModule, static_cast<unsigned>(parts),
      [&](std::unique_ptr<llvm::Module> part) {
        llvm::raw_svector_ostream os(bitcode.emplace_back());
        llvm::WriteBitcodeToFile(*part, os);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  std::vector<std::string> errors(bitcode.size());
  for (size_t i = 0; i < bitcode.size(); ++i)
    objects.push_back(i == 0 ? path : path + "." + std::to_string(i));
  std::vector<std::thread> workers;
  for (size_t i = 0; i < bitcode.size(); ++i)
    workers.emplace_back([&, i] {
      llvm::LLVMContext partContext;
      llvm::Expected<std::unique_ptr<llvm::Module>> part = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(llvm::StringRef(bitcode[i].data(), bitcode[i].size()), "part"),
          partContext);
      if (!part) {
        errors[i] = "cannot read back part " + std::to_string(i) + " of the module: " +
                    llvm::toString(part.takeError());
        return;
      }
      std::unique_ptr<llvm::TargetMachine> partMachine = makeMachine();
      if (!partMachine) {
        errors[i] = "cannot create a target machine for CPU '" + cpu + "'";
        return;
      }
      optimize(**part, *partMachine, options.optLevel);
      errors[i] = codegen(**part, *partMachine, objects[i]);
    });
  for (std::thread &w : workers) w.join();
  for (const std::string &error : errors)
    if (!error.empty()) return module.emitError(error);
  return mlir::success();
}

}  // namespace stepc::codegen
