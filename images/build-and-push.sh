#!/usr/bin/env bash
# Build mendflow's images and push them to a registry: the flow image (images/app, for the */kubernetes
# deployments) and the CI images (images/ci-runner-*/Dockerfile) the stage Jobs run.
#
#   images/build-and-push.sh [--no-push] [app|LANGUAGE...]     (default: app and every images/ci-runner-*/)
#
# Environment: MENDFLOW_IMAGE_REGISTRY (default ghcr.io/mendflow), MENDFLOW_IMAGE_TAG (default 0.1.0),
# CONTAINER_ENGINE (default: the first of docker, podman, buildah found), PLATFORM (default linux/amd64).
# These match settings.kubernetes.image_registry / image_tag, so the launcher finds what this pushes.
# The build context is the repository root: each image copies the repo's own code.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
registry=${MENDFLOW_IMAGE_REGISTRY:-ghcr.io/mendflow}
tag=${MENDFLOW_IMAGE_TAG:-0.1.0}
platform=${PLATFORM:-linux/amd64}
push=1

args=()
for a in "$@"; do
  case "$a" in
    --no-push) push=0 ;;
    -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-and-push.sh: unknown option $a" >&2; exit 2 ;;
    *) args+=("$a") ;;
  esac
done

engine=${CONTAINER_ENGINE:-}
if [[ -z "$engine" ]]; then
  for candidate in docker podman buildah; do
    if command -v "$candidate" >/dev/null 2>&1; then engine=$candidate; break; fi
  done
fi
if [[ -z "$engine" ]]; then
  echo "build-and-push.sh: no container engine (docker, podman or buildah) on PATH; set CONTAINER_ENGINE" >&2
  exit 1
fi

if [[ ${#args[@]} -eq 0 ]]; then
  args=(app)
  for d in "$here"/ci-runner-*/; do args+=("$(basename "$d" | sed 's/^ci-runner-//')"); done
fi

for name in "${args[@]}"; do
  dir=$([[ "$name" == app ]] && echo app || echo "ci-runner-$name")
  dockerfile="$here/$dir/Dockerfile"
  [[ -f "$dockerfile" ]] || { echo "build-and-push.sh: no $dockerfile" >&2; exit 2; }
  image="$registry/$dir:$tag"
  echo "==> building $image with $engine"
  case "$engine" in
    buildah) buildah bud --platform "$platform" -f "$dockerfile" -t "$image" "$root" ;;
    *) "$engine" build --platform "$platform" -f "$dockerfile" -t "$image" "$root" ;;
  esac
  if [[ $push -eq 1 ]]; then
    echo "==> pushing $image"
    "$engine" push "$image"
  fi
done
