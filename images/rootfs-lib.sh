# shellcheck shell=bash
# Steps every CI image's mmdebstrap customize hook shares (images/ci-runner-*/rootfs-hook.sh source this file;
# each image's offline.sh lists it among its inputs, so a change here rebuilds them all).
# Environment (set by scripts/build-images.sh): MF_UID (= JOB_UID), MF_REPO (the repository root), SOURCE_DATE_EPOCH.

# job_user ROOT: one user with the fixed numeric uid and no login shell, owning /cache and /workspace (the
# essential variant has no useradd: write the files).
job_user() {
  echo "mendflow:x:$MF_UID:$MF_UID::/tmp:/usr/sbin/nologin" >>"$1/etc/passwd"
  echo "mendflow:x:$MF_UID:" >>"$1/etc/group"
  echo "mendflow:!:$((SOURCE_DATE_EPOCH / 86400))::::::" >>"$1/etc/shadow"
  install -d -m 0755 -o "$MF_UID" -g "$MF_UID" "$1/cache" "$1/workspace"
}

# install_runner ROOT MODULE DIR...: the in-job packages (DIR relative to images/, e.g.
# ci-runner-python/mendflow_runner) owned by root, so the job cannot modify them, under /opt/mendflow; importable
# through a .pth file rather than PYTHONPATH, so they do not leak into the environments of the code under test;
# byte-compiled with hashes, not mtimes, so the .pyc files are reproducible and stay valid on a read-only root.
# MODULE is imported once as the check.
install_runner() {
  local root=$1 module=$2
  shift 2
  mkdir -p "$root/opt/mendflow"
  tar -C "$MF_REPO/images" --exclude=__pycache__ --exclude='*.pyc' --exclude=node_modules -cf - "$@" |
    tar -C "$root/opt/mendflow" --no-same-owner --strip-components=1 -xf -
  chmod -R u=rwX,go=rX "$root/opt/mendflow"
  chroot "$root" env SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" \
    python3 -m compileall -q --invalidation-mode checked-hash /opt/mendflow
  echo /opt/mendflow >"$root/usr/lib/python3/dist-packages/mendflow-runner.pth"
  chroot "$root" env PYTHONDONTWRITEBYTECODE=1 python3 -c "import $module"
}

# fix_times ROOT PATH...: what the hook added (and job_user and install_runner always add) dated SOURCE_DATE_EPOCH.
fix_times() {
  local root=$1
  shift
  find "$root/opt/mendflow" "$root/cache" "$root/workspace" "$root/usr/lib/python3/dist-packages/mendflow-runner.pth" \
    "$@" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}
