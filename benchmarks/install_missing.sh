#!/usr/bin/env bash
# benchmarks/install_missing.sh PACKAGE...: installs the Debian packages a benchmark found
# missing (as root), or says how and fails. Nothing to do without arguments.
set -euo pipefail
(($#)) || exit 0
if [[ $(id -u) == 0 ]]; then
  apt-get install -y "$@"
else
  echo "missing: $*; run: sudo apt-get install -y $*" >&2
  exit 1
fi
