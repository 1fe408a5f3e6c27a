#!/usr/bin/env bash
# mmdebstrap customize hook of the offline Java CI image (scripts/build-images.sh): what ./Dockerfile's RUN and
# COPY steps do after apt-get, applied to the Debian root filesystem "$1" (the JDK and Maven are its packages).
# Environment (set by build-images.sh): MF_UID (= JOB_UID), MF_REPO (the repository root), SOURCE_DATE_EPOCH.
set -euo pipefail
R=$1
# shellcheck source=images/rootfs-lib.sh
source "$MF_REPO/images/rootfs-lib.sh"

chroot "$R" sh -c 'java -version && mvn -version' 2>&1 | sed 's/^/hook: /'
chroot "$R" dpkg-query -W openjdk-17-jdk-headless openjdk-17-jre-headless maven python3 | sed 's/^/hook: installed /'
# The JDK is the mirror's current one (offline.sh); say so when the Dockerfile's pin is another.
pin=$(sed -n 's/^ARG OPENJDK_VERSION=//p' "$MF_REPO/images/ci-runner-java/Dockerfile")
# shellcheck disable=SC2016 # dpkg-query's format
jdk=$(chroot "$R" dpkg-query -W -f '${Version}' openjdk-17-jdk-headless)
[[ "$jdk" == "$pin" ]] || echo "hook: note: openjdk-17-jdk-headless is $jdk, the Dockerfile pins OPENJDK_VERSION=$pin"

job_user "$R"

# The runner's shared core and the Java runner (images/rootfs-lib.sh).
install_runner "$R" mendflow_java.build ci-runner-python/mendflow_runner ci-runner-java/mendflow_java

# The JDK's trust store (ca-certificates-java's postinst): a JKS keystore whose entries carry the time they were
# added. Set them to SOURCE_DATE_EPOCH and recompute the keystore's keyed SHA-1 (password "changeit",
# ca-certificates-java's default: /etc/default/cacerts sets none), so the same packages give the same bytes;
# keytool checks the result.
python3 - "$R/etc/ssl/certs/java/cacerts" "$SOURCE_DATE_EPOCH" <<'PY'
import hashlib, struct, sys
path, epoch = sys.argv[1], int(sys.argv[2])
b = bytearray(open(path, "rb").read())
if b[:4] != b"\xfe\xed\xfe\xed" or struct.unpack(">I", b[4:8])[0] != 2:
    sys.exit(f"{path}: not a JKS keystore (version 2)")
off = 12
for _ in range(struct.unpack(">I", b[8:12])[0]):
    tag, alen = struct.unpack(">IH", b[off:off + 6])
    if tag != 2:
        sys.exit(f"{path}: entry of type {tag}, not a trusted certificate")
    off += 6 + alen
    b[off:off + 8] = struct.pack(">Q", epoch * 1000)
    off += 8
    (tlen,) = struct.unpack(">H", b[off:off + 2])
    off += 2 + tlen
    (clen,) = struct.unpack(">I", b[off:off + 4])
    off += 4 + clen
if off + 20 != len(b):
    sys.exit(f"{path}: {len(b) - off} bytes after the entries, not a SHA-1")
b[off:] = hashlib.sha1("changeit".encode("utf-16-be") + b"Mighty Aphrodite" + bytes(b[:off])).digest()
open(path, "wb").write(b)
PY
n=$(chroot "$R" keytool -list -keystore /etc/ssl/certs/java/cacerts -storepass changeit | grep -c trustedCertEntry)
echo "hook: cacerts: $n trusted certificates, dated @$SOURCE_DATE_EPOCH"

# Fixed timestamps for what this hook and the packages' maintainer scripts added (the JDK's cacerts, alternatives).
fix_times "$R" "$R/etc" "$R/var/lib/dpkg/alternatives"
