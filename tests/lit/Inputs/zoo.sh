#!/bin/sh
# The model zoo by the names the tests use: prints the stepc arguments for one (the model file
# and its --config), or with --all every name. Each model is written once (models/*.mlir); the
# small sizes are configurations inside it (step.model ... configs(...)).
#   zoo.sh tiny/gpt2       ->  REPO/models/gpt2_124m.mlir --config=tiny
#   zoo.sh byte_lm_small   ->  REPO/models/byte_lm.mlir --config=small
models="$(cd "$(dirname "$0")/../../../models" && pwd)"
all="mlp byte_lm byte_lm_small byte_lm_residual byte_lm_residual_small byte_lm_moe byte_lm_moe_small gpt2_124m gpt2_moe tiny/mlp tiny/byte_lm_residual tiny/byte_lm tiny/byte_lm_moe tiny/gpt2 tiny/gpt2_moe"
case "$1" in
  --all) echo "$all" ;;
  mlp | byte_lm_residual | byte_lm | byte_lm_moe | gpt2_124m | gpt2_moe) echo "$models/$1.mlir" ;;
  byte_lm_small | byte_lm_residual_small | byte_lm_moe_small) echo "$models/${1%_small}.mlir --config=small" ;;
  tiny/mlp | tiny/byte_lm_residual | tiny/byte_lm | tiny/byte_lm_moe | tiny/gpt2_moe) echo "$models/${1#tiny/}.mlir --config=tiny" ;;
  tiny/gpt2) echo "$models/gpt2_124m.mlir --config=tiny" ;;
  *) echo "zoo.sh: unknown model '$1'; known: $all" >&2; exit 2 ;;
esac
