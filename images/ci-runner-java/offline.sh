# shellcheck shell=bash disable=SC2034 # variables read by scripts/build-images.sh
# Offline build description of the Java (Maven) CI image, read by scripts/build-images.sh (see images/README.md).
# It builds what ./Dockerfile builds, without the python:slim base image: Debian bookworm's python3 (3.11), and
# the same Debian packages the Dockerfile installs, OpenJDK 17 and Maven 3.8; ENV/USER/WORKDIR/CMD are read from
# ./Dockerfile. Maven's plugins (Surefire, JaCoCo) are not in the image: the runner's dependency phase fetches
# them from Maven Central (or the repository the trusted side names) into /cache/m2 at job time.
#
# The Maven version is the Dockerfile's pin (bookworm has only that one); the JDK is the mirror's current
# bookworm(-security) build: security updates supersede the Dockerfile's OPENJDK_VERSION on the mirror, and apt
# cannot install a version that is no longer listed. The installed versions are in the build log.

IMAGE_INPUTS=(images/rootfs-lib.sh images/ci-runner-python/mendflow_runner images/ci-runner-java/mendflow_java)
DEBIAN_PACKAGES=(python3 python-is-python3 ca-certificates openjdk-17-jdk-headless "maven=$(dockerfile_arg MAVEN_VERSION)")
# The JDK's postinst registers man pages as alternatives' slaves: update-alternatives needs the directory, which
# the image's dpkg path-exclude for /usr/share/man/* would leave out (the Dockerfile makes it for the same reason).
# shellcheck disable=SC2016 # mmdebstrap's "$1" (the root filesystem)
DEBIAN_HOOKS=(--essential-hook='mkdir -p "$1/usr/share/man/man1"')
IMAGE_BASE_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
IMAGE_SMOKE=(
  "sh -c 'java -version && javac -version && mvn -v'"
  "sh -c 'python -m mendflow_java --help >/dev/null && python -c \"import mendflow_java.build\" && echo runner ok'"
  "sh -c 'id && touch /workspace/w /cache/c /tmp/t && ! touch /opt/mendflow/x /x 2>/dev/null && echo read-only root ok'"
)
