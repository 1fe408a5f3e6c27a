# shellcheck shell=bash disable=SC2034 # variables read by scripts/build-images.sh
# Offline build description of the Python CI image, read by scripts/build-images.sh (sourced by bash, in a
# subshell per image; see images/README.md). It builds what ./Dockerfile builds, without the python:slim base
# image: the root filesystem comes from Debian bookworm's packages (python3 is 3.11 there too), the tools from
# their PyPI wheels, and ENV/USER/WORKDIR/CMD are read from ./Dockerfile, as are the uv and ruff pins, so the
# two builds cannot drift apart.

# Files whose contents make the image (this file, ./Dockerfile, ./rootfs-hook.sh and the build script are added).
IMAGE_INPUTS=(images/rootfs-lib.sh images/ci-runner-python/mendflow_runner)
# The Debian packages of the root filesystem (mmdebstrap --variant=essential --include=...).
DEBIAN_PACKAGES=(python3 python-is-python3 ca-certificates)
# What the python:slim base image's config would have brought.
IMAGE_BASE_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
# Pinned tools from PyPI wheels, versions from the Dockerfile's ARG lines: NAME==VERSION.
IMAGE_WHEELS=("uv==$(dockerfile_arg UV_VERSION)" "ruff==$(dockerfile_arg RUFF_VERSION)")
# Commands `build-images.sh --smoke` runs in the image (uid 10001, read-only root, as the pod does).
IMAGE_SMOKE=(
  "sh -c 'python -m mendflow_runner --help >/dev/null && echo runner ok'"
  "env MENDFLOW_TERMINATION_LOG=/tmp/termination-log python -m mendflow_runner.transfer -- sh -c 'uv --version && ruff --version'"
  "sh -c 'id && touch /workspace/w /cache/c /tmp/t && ! touch /opt/mendflow/x /x 2>/dev/null && echo read-only root ok'"
)
