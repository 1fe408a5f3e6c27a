# shellcheck shell=bash disable=SC2034 # variables read by scripts/build-images.sh
# Offline build description of the pause image (the pod sandbox's first container), read by
# scripts/build-images.sh; see images/README.md. Only the test node (tests/fixtures/kube_node.py) needs it: it
# cannot pull registry.k8s.io/pause, so this builds the same program from the Kubernetes sources (pause.c,
# k8s.io/kubernetes@v1.34.4 build/pause/linux/pause.c, unchanged) and imports it under exactly the name
# containerd's sandbox_image names. Real clusters pull the upstream image and never use this one.

# containerd's sandbox_image (tests' containerd config); not content-tagged: containerd asks for this name.
IMAGE_REF=registry.k8s.io/pause:3.10
IMAGE_INPUTS=(images/pause/pause.c)
# The upstream image's config: the program as entrypoint, run as nobody.
IMAGE_CONFIG=(--config.entrypoint /pause --config.user 65535:65535)
IMAGE_SMOKE=("/pause -v")

# image_rootfs DIR: fill DIR with the image's whole filesystem (no Debian packages).
image_rootfs() {
  # As upstream's Makefile (CFLAGS = -Os -Wall -Werror -static -DVERSION=...), plus -s and a fixed source path so
  # the binary is reproducible.
  gcc -Os -Wall -Werror -static -s -DVERSION=v3.10-mendflow -ffile-prefix-map="$ROOT"=. \
    -o "$1/pause" "$ROOT/images/pause/pause.c"
}
