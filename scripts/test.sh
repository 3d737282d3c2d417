#!/usr/bin/env bash
# Command 2 of the README: set up as command 1 does (without the demo), then
# run every test.  .ci/run runs this.
set -euo pipefail
source "$(dirname "$0")/common.sh"
prepare
say "running the test suite"
cd "$BUILD_DIR"
ctest --output-on-failure -j 1 "$@"
