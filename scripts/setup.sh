#!/usr/bin/env bash
# Command 1 of the README: on a fresh Debian 12 machine, install what is
# missing, build HDF5 1.14 and h5journal, and run the end-to-end demo.
set -euo pipefail
source "$(dirname "$0")/common.sh"
prepare
"$ROOT_DIR/scripts/demo.sh"
