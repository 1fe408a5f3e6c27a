#!/usr/bin/env bash
# mmdebstrap customize hook of the offline Python CI image (scripts/build-images.sh): what ./Dockerfile's RUN and
# COPY steps do, applied to the Debian root filesystem "$1".
# Environment (set by build-images.sh): MF_UID (= JOB_UID), MF_WHEELS (the uv and ruff wheels, space-separated),
# MF_REPO (the repository root), SOURCE_DATE_EPOCH.
set -euo pipefail
R=$1

# One user with a fixed numeric uid and no login shell (the essential variant has no useradd: write the files).
echo "mendflow:x:$MF_UID:$MF_UID::/tmp:/usr/sbin/nologin" >>"$R/etc/passwd"
echo "mendflow:x:$MF_UID:" >>"$R/etc/group"
echo "mendflow:!:$((SOURCE_DATE_EPOCH / 86400))::::::" >>"$R/etc/shadow"
install -d -m 0755 -o "$MF_UID" -g "$MF_UID" "$R/cache" "$R/workspace"

# uv and ruff: the binaries in their wheels' .data/scripts.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in $MF_WHEELS; do python3 -m zipfile -e "$w" "$tmp"; done
install -m 0755 -o 0 -g 0 "$tmp"/uv-*.data/scripts/uv "$tmp"/uv-*.data/scripts/uvx \
  "$tmp"/ruff-*.data/scripts/ruff "$R/usr/local/bin/"

# The runner, owned by root (the job cannot modify it), importable through a .pth file rather than PYTHONPATH so
# it does not leak into the environments of the code under test. Byte-compiled with hashes, not mtimes, so the
# .pyc files are reproducible and stay valid on a read-only root.
mkdir -p "$R/opt/mendflow"
tar -C "$MF_REPO/images/ci-runner-python" --exclude=__pycache__ --exclude='*.pyc' -cf - mendflow_runner \
  | tar -C "$R/opt/mendflow" --no-same-owner -xf -
chmod -R u=rwX,go=rX "$R/opt/mendflow"
chroot "$R" env SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" \
  python3 -m compileall -q --invalidation-mode checked-hash /opt/mendflow
echo /opt/mendflow >"$R/usr/lib/python3/dist-packages/mendflow-runner.pth"
chroot "$R" env PYTHONDONTWRITEBYTECODE=1 python3 -c "import mendflow_runner.transfer"

# Fixed timestamps for what this hook added.
find "$R/opt/mendflow" "$R/usr/local/bin" "$R/cache" "$R/workspace" "$R/usr/lib/python3/dist-packages/mendflow-runner.pth" \
  -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
