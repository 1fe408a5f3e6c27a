#!/usr/bin/env bash
# mmdebstrap customize hook of the offline Go CI image (scripts/build-images.sh): what ./Dockerfile's COPY and RUN
# steps do, applied to the Debian root filesystem "$1" (gcc and libc6-dev are its packages).
# Environment (set by build-images.sh): MF_GOROOT (the verified Go toolchain), MF_GOBIN (golangci-lint), MF_UID
# (= JOB_UID), MF_REPO (the repository root), SOURCE_DATE_EPOCH.
set -euo pipefail
R=$1
# shellcheck source=images/rootfs-lib.sh
source "$MF_REPO/images/rootfs-lib.sh"

# The toolchain at /usr/local/go, as in Go's image (root-owned, files 0644, commands 0755); golangci-lint.
mkdir -p "$R/usr/local/go"
tar -C "$MF_GOROOT" -cf - . | tar -C "$R/usr/local/go" --no-same-owner -xf -
chmod -R u+w,go=rX "$R/usr/local/go"
for b in $MF_GOBIN; do install -m 0755 -o 0 -g 0 "$b" "$R/usr/local/bin/"; done
# (Run from outside: inside, the go command would leave its telemetry counters in the image's /root/.config.)
"$R/usr/local/go/bin/go" version | sed 's/^/hook: /'
chroot "$R" dpkg-query -W gcc libc6-dev python3 | sed 's/^/hook: installed /'

job_user "$R"

# The runner's shared core and the Go runner (images/rootfs-lib.sh).
install_runner "$R" mendflow_go.build ci-runner-python/mendflow_runner ci-runner-go/mendflow_go

# The standard library's build, as ./Dockerfile's RUN makes it (mendflow_go.warm; its ENV names the directory): a
# pod's empty /cache/go/build starts as a copy of it instead of compiling it again. The toolchain alone runs,
# as root, inside the image, so its paths are the pod's; HOME and the go command's own files stay in a scratch
# directory that is removed after.
scratch=$(mktemp -d "$R/tmp/seed.XXXXXX")
chroot "$R" env -i PATH=/usr/local/go/bin:/usr/bin:/bin HOME="/tmp/${scratch##*/}" GOTOOLCHAIN=local \
  GOTELEMETRY=off PYTHONDONTWRITEBYTECODE=1 python3 -m mendflow_go.warm /opt/mendflow/go-std-cache
rm -rf "$scratch"
echo "hook: standard library seed $(du -sh "$R/opt/mendflow/go-std-cache" | cut -f1)"

# Fixed timestamps for what this hook added.
fix_times "$R" "$R/usr/local"
