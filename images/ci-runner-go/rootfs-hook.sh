#!/usr/bin/env bash
# mmdebstrap customize hook of the offline Go CI image (scripts/build-images.sh): what ./Dockerfile's COPY and RUN
# steps do, applied to the Debian root filesystem "$1" (gcc and libc6-dev are its packages).
# Environment (set by build-images.sh): MF_GOROOT (the verified Go toolchain), MF_GOBIN (golangci-lint), MF_UID
# (= JOB_UID), MF_REPO (the repository root), SOURCE_DATE_EPOCH.
set -euo pipefail
R=$1

# The toolchain at /usr/local/go, as in Go's image (root-owned, files 0644, commands 0755); golangci-lint.
mkdir -p "$R/usr/local/go"
tar -C "$MF_GOROOT" -cf - . | tar -C "$R/usr/local/go" --no-same-owner -xf -
chmod -R u+w,go=rX "$R/usr/local/go"
for b in $MF_GOBIN; do install -m 0755 -o 0 -g 0 "$b" "$R/usr/local/bin/"; done
# (Run from outside: inside, the go command would leave its telemetry counters in the image's /root/.config.)
"$R/usr/local/go/bin/go" version | sed 's/^/hook: /'
chroot "$R" dpkg-query -W gcc libc6-dev python3 | sed 's/^/hook: installed /'

# One user with a fixed numeric uid and no login shell (the essential variant has no useradd: write the files).
echo "mendflow:x:$MF_UID:$MF_UID::/tmp:/usr/sbin/nologin" >>"$R/etc/passwd"
echo "mendflow:x:$MF_UID:" >>"$R/etc/group"
echo "mendflow:!:$((SOURCE_DATE_EPOCH / 86400))::::::" >>"$R/etc/shadow"
install -d -m 0755 -o "$MF_UID" -g "$MF_UID" "$R/cache" "$R/workspace"

# The runner's shared core and the Go runner, root-owned, on sys.path through a .pth file, byte-compiled with
# hashes (reproducible, valid on a read-only root).
mkdir -p "$R/opt/mendflow"
tar -C "$MF_REPO/images" --exclude=__pycache__ --exclude='*.pyc' -cf - \
  ci-runner-python/mendflow_runner ci-runner-go/mendflow_go |
  tar -C "$R/opt/mendflow" --no-same-owner --strip-components=1 -xf -
chmod -R u=rwX,go=rX "$R/opt/mendflow"
chroot "$R" env SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" \
  python3 -m compileall -q --invalidation-mode checked-hash /opt/mendflow
echo /opt/mendflow >"$R/usr/lib/python3/dist-packages/mendflow-runner.pth"
chroot "$R" env PYTHONDONTWRITEBYTECODE=1 python3 -c "import mendflow_go.build"

# Fixed timestamps for what this hook added.
find "$R/usr/local" "$R/opt/mendflow" "$R/cache" "$R/workspace" "$R/usr/lib/python3/dist-packages/mendflow-runner.pth" \
  -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
