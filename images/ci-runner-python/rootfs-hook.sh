#!/usr/bin/env bash
# mmdebstrap customize hook of the offline Python CI image (scripts/build-images.sh): what ./Dockerfile's RUN and
# COPY steps do, applied to the Debian root filesystem "$1".
# Environment (set by build-images.sh): MF_UID (= JOB_UID), MF_WHEELS (the uv and ruff wheels, space-separated),
# MF_REPO (the repository root), SOURCE_DATE_EPOCH.
set -euo pipefail
R=$1
# shellcheck source=images/rootfs-lib.sh
source "$MF_REPO/images/rootfs-lib.sh"

job_user "$R"

# uv and ruff: the binaries in their wheels' .data/scripts.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in $MF_WHEELS; do python3 -m zipfile -e "$w" "$tmp"; done
install -m 0755 -o 0 -g 0 "$tmp"/uv-*.data/scripts/uv "$tmp"/uv-*.data/scripts/uvx \
  "$tmp"/ruff-*.data/scripts/ruff "$R/usr/local/bin/"

# The runner (images/rootfs-lib.sh).
install_runner "$R" mendflow_runner.transfer ci-runner-python/mendflow_runner

# Fixed timestamps for what this hook added.
fix_times "$R" "$R/usr/local/bin"
