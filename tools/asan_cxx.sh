#!/bin/sh
# The C++ driver `stepc compile` links with under the sanitizers (tests/sanitized): the same
# driver with AddressSanitizer's and UndefinedBehaviorSanitizer's runtimes linked in, for an
# executable whose runtime archive was built with --config=asan ($STEPC_RUNTIME_ARCHIVE).
exec "${STEPC_ASAN_CXX:-g++}" -fsanitize=address,undefined "$@"
