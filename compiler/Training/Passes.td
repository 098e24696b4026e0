//===- Passes.td - training-step passes --------------------*- tablegen -*-===//
#ifndef STEPC_TRAINING_PASSES_TD
#define STEPC_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def BuildTrainStep : Pass<"step-build-train-step", "mlir::ModuleOp"> {
  let summary = "Assembles the whole training step of a model as one function";
  let description = [{
    From the module's `step.model`, builds

    ```mlir
    func.func @train_step(%params..., %optimizer_state..., %batch..., %step: tensor<i64>)
        -> (%new_params..., %new_optimizer_state..., %loss, %grad_norm, %lr[, %sam_loss])
    ```

    holding, in this one function: the forward pass and the loss; the backward pass (reverse
    mode, see compiler/Autodiff); gradient accumulation over `micro_batches` as a repeat; SAM's
    perturbed second pass (ε = ρ·g/‖g‖, or ρ·w²⊙g/‖w⊙g‖ when adaptive, on the same batch or,
    with next_batch, ε from the first half of the batch and the gradient from the second);
    clipping (global norm or adaptive per column); the LR schedule from the step counter; and
    the optimizer update (SGD, Adam, AdamW). Every argument and result carries `step.role`
    and `step.name` attributes naming what it holds. The model stays in the module as the
    declaration of parameters, inputs and configuration. Options override the model's config.
    Micro-batches average the per-micro-batch losses and gradients, so the loss should be a
    mean over the batch (cross_entropy's default); parameters of any float dtype get their
    updates in their own dtype, with norms, the learning rate and schedules in f32.
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", "\"\"",
           "override the optimizer: sgd, adam or adamw">,
    Option<"lr", "lr", "double", "std::numeric_limits<double>::quiet_NaN()",
           "override the learning rate (unset keeps the model's)">,
    Option<"samRho", "sam-rho", "double", "std::numeric_limits<double>::quiet_NaN()",
           "override SAM's rho; 0 turns SAM off (unset keeps the model's)">,
    Option<"microBatches", "micro-batches", "int64_t", "0",
           "override the number of micro-batches (0 keeps the model's)">,
    Option<"clip", "clip", "std::string", "\"\"",
           "override gradient clipping: none, global_norm or agc">,
    Option<"exportGrads", "export-grads", "bool", "false",
           "also return every parameter's gradient (before clipping: the one grad_norm measures; "
           "SAM's second pass's with SAM), role `grad`, for `train --save-grads`">,
    Option<"dataParallel", "data-parallel", "bool", "false",
           "split the micro-batches over the data-parallel ranks (the loop marked "
           "step.rank_split) and sum the loss and gradients over them (step.all_reduce) before "
           "clipping, SAM's perturbation and the optimizer; micro-batches are summed in a binary "
           "tree, so N ranks give one process's bits (micro_batches a power of two)">,
    Option<"overlapReductions", "overlap-reductions", "bool", "false",
           "with data-parallel: split each reduction into step.all_reduce_start and "
           "step.all_reduce_wait, and run the rank's last micro-batch after the loop over the "
           "others (step.last_micro_batch), so that --step-sink-layer-updates can issue each "
           "layer's reduction inside that micro-batch's backward (stepc compile's default)">,
    Option<"shardOptimizer", "shard-optimizer", "int64_t", "0",
           "with data-parallel: split each parameter's optimizer state and update over this "
           "many ranks by blocks of its first axis (ZeRO stage 1; 0: none); each rank updates "
           "its block and the ranks gather the parameters (step.rank_shard, step.all_gather)">,
    Option<"rebuildError", "rebuild-error", "bool", "false",
           "also return metric `rebuild_error`: the largest max|rebuilt - x| / max|x| of the "
           "inputs each reversible repeat's backward rebuilds, against the forward's (kept for "
           "it until the backward ends); 0 means bit for bit. A diagnostic (micro_batches = 1)">,
    Option<"columnNorms", "column-norms", "bool", "false",
           "sum each gradient's squares by columns first (the CPU's choice: vector lanes and "
           "threads instead of one chain of adds; a GPU splits a whole sum over its grid)">,
  ];
  let dependentDialects = ["::stepc::step::StepDialect", "::mlir::func::FuncDialect"];
}

def BuildEvalLoss : Pass<"step-build-eval-loss", "mlir::ModuleOp"> {
  let summary = "Adds @eval_loss, the model's loss on a batch without a training step";
  let description = [{
    From the module's `step.model`, next to its `@train_step` (the `train` stage), builds

    ```mlir
    func.func @eval_loss(%params..., %batch...) -> tensor<f32>
    ```

    the forward pass and the loss only: no gradients, no update, parameters read, not written,
    and no dropout (evaluation is inference).
    `NAME eval` runs it batch after batch. Arguments carry the same `step.role` / `step.name`
    attributes as @train_step's. A module that has @eval_loss already keeps it (the pass is
    idempotent, so a dump can be advanced again).
  }];
  let dependentDialects = ["::stepc::step::StepDialect", "::mlir::func::FuncDialect"];
}

def BuildSampleLogits : Pass<"step-build-sample-logits", "mlir::ModuleOp"> {
  let summary = "Adds @sample_logits, a language model's next-token logits for generation";
  let description = [{
    For a model with one token input whose targets its cross-entropy scores, builds

    ```mlir
    func.func @sample_logits(%params..., %tokens: tensor<BxTxi32>, %position: tensor<i32>)
        -> tensor<BxVxf32>
    ```

    the forward without dropout up to the scored logits, at `position` of every row (a row
    holds its context from position 0; what `NAME sample` draws the next token from, when it
    recomputes the whole window). Other models get none. Idempotent.
  }];
  let dependentDialects = ["::stepc::step::StepDialect", "::mlir::func::FuncDialect"];
}

def BuildSampleStep : Pass<"step-build-sample-step", "mlir::ModuleOp"> {
  let summary = "Adds @sample_step, a language model's forward one position at a time";
  let description = [{
    For a language model (as --step-build-sample-logits) whose ops allow it, builds

    ```mlir
    func.func @sample_step(%params..., %tokens: tensor<Bx1xi32>, %position: tensor<i32>,
                           %state...) -> (tensor<BxVxf32>, %state'...)
    ```

    the next-token logits after feeding one more token at `position`, with `state` (zeros at
    position 0) carrying what later positions need: each causal convolution's last K - 1
    inputs, each running sum along the sequence; positions along the sequence come from
    `position`. Its logits are @sample_logits's at the same position. A model with an op that
    mixes positions otherwise (attention over the sequence, a reduction along it) gets none, and
    the module attribute `step.sample_step_unavailable` names the op. Idempotent.
  }];
  let dependentDialects = ["::stepc::step::StepDialect", "::mlir::func::FuncDialect"];
}

def SinkLayerUpdates : Pass<"step-sink-layer-updates", "mlir::ModuleOp"> {
  let summary = "Moves each layer's share of the update into the repeat that computes its gradient";
  let description = [{
    After --step-build-train-step, a stacked parameter's update (AGC, the optimizer, the gradient
    norm's sum) runs on whole `[count, ...]` tensors after the backward repeat, so the repeat
    must first stack every layer's gradient: gradient memory grows with depth even where the
    backward stores nothing per layer. This pass moves into a repeat of a function's entry block
    the ops after it that act on each layer's slice alone:

    * elementwise ops (and step.sum over axes other than 0) whose operands are the repeat's
      stacked results, tensors of the same `[count, ...]` shape defined before the repeat (they
      become `over` operands), values of lower rank (they broadcast the same in the body), or
      other moved ops' results;
    * step.sum over axis 0 of a moved value, which becomes a carried sum of each layer's part
      (the global gradient norm);
    * only while every result of a moved elementwise op is used by moved ops or returned as a
      param or optimizer-state update. Small values such an op needs that do not depend on the
      repeat (the learning rate, the bias corrections) are computed before it.

    A returned update comes out of the repeat stacked, written over the `over` operand of its
    own argument (the repeat's `step.stack_over` attribute: for each stacked result, the `over`
    operand it replaces, or -1): the lowering then stacks it into that argument's buffer, which
    --step-update-in-place makes the update's destination. Stacked results nothing uses any
    more are dropped. The layer's gradient is then consumed as it is produced; only the
    parameters and optimizer state stay parameter-sized.

    A reversible stack run in segments has a backward that is an outer repeat over the
    segments around the layers' repeat, and an update that reads each gradient reshaped from
    `[S, L, ...]` to `[S·L, ...]`: the update is first rewritten on `[S, L, ...]` values (the
    parameters and state it reads reshaped the same way before the repeat), moved into the
    outer repeat, and from its body into the layers' repeat, each writing over its own
    `over` slices.

    Global-norm clipping and SAM's perturbation need a norm over every gradient before any
    update, so their gradients stay stacked.

    A data-parallel step's reduction of a stacked gradient (step.all_reduce_start, with the
    elementwise ops that fold the rank's micro-batch sums into its input) moves in the same
    way: each layer's reduction starts as soon as the backward has the layer's gradient, and
    the starts' results come out stacked for the step.all_reduce_wait after the repeat, which
    the update waits for. The reductions overlap the backward of the layers below.
  }];
  let dependentDialects = ["::stepc::step::StepDialect", "::mlir::func::FuncDialect"];
}

#endif // STEPC_TRAINING_PASSES_TD
