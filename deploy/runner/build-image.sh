#!/usr/bin/env bash
# Builds the default image of the container runtime, offline, from two
# Debian packages: busybox-static (the usual tools: sh, cat, grep, sed, …)
# and bash-static (bash, which skill commands are run with).
#
#     bash deploy/runner/build-image.sh [IMAGE]
#
# IMAGE defaults to localhost/skills-runner:latest. The engine is podman,
# or the program in ENGINE (ENGINE=docker). Nothing is pulled from a
# registry: the root file system is put together here and imported
# (`podman import`). What the image holds:
#
#   /bin/busybox and a link for each of its tools, in /bin;
#   /bin/bash (bash-static), also at /usr/bin/bash, and /usr/bin/env;
#   /etc/passwd and /etc/group with root and nobody (65534);
#   /tmp, mode 1777 (the runtime mounts a private tmpfs there anyway);
#   user 65534:65534, working folder /.
#
# Skills that need Python or other tools need a bigger image: see
# docs/exec.md, "The container runtime".
set -euo pipefail

IMAGE="${1:-localhost/skills-runner:latest}"
ENGINE="${ENGINE:-podman}"
ENGINE_ARGS=()
if [ "$(basename "$ENGINE")" = podman ]; then
    # crun fails on hosts with hybrid cgroups; runc works everywhere.
    ENGINE_ARGS=(--runtime runc)
fi

for f in /bin/busybox /bin/bash-static; do
    if [ ! -x "$f" ]; then
        echo "build-image: $f is missing: apt-get install busybox-static bash-static" >&2
        exit 1
    fi
done
if ! /bin/busybox --list >/dev/null 2>&1; then
    echo "build-image: /bin/busybox is not busybox-static (no --list): apt-get install busybox-static" >&2
    exit 1
fi

ROOTFS="$(mktemp -d)"
trap 'rm -rf "$ROOTFS"' EXIT
mkdir -p "$ROOTFS"/{bin,usr/bin,etc,tmp,dev,proc,sys,run,var/tmp}
cp /bin/busybox "$ROOTFS/bin/busybox"
for tool in $(/bin/busybox --list); do
    [ "$tool" = busybox ] || ln -sf busybox "$ROOTFS/bin/$tool"
done
rm -f "$ROOTFS/bin/bash"
cp /bin/bash-static "$ROOTFS/bin/bash"
ln -sf ../../bin/bash "$ROOTFS/usr/bin/bash"
ln -sf ../../bin/busybox "$ROOTFS/usr/bin/env"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' > "$ROOTFS/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOTFS/etc/group"
chmod 1777 "$ROOTFS/tmp" "$ROOTFS/var/tmp"

LOG="$ROOTFS.log"
if ! tar --numeric-owner --owner=0 --group=0 -C "$ROOTFS" -cf - . |
    "$ENGINE" "${ENGINE_ARGS[@]}" import \
        --change 'USER 65534:65534' \
        --change 'WORKDIR /' \
        --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
        - "$IMAGE" >"$LOG" 2>&1; then
    cat "$LOG" >&2
    rm -f "$LOG"
    exit 1
fi
rm -f "$LOG"
echo "$IMAGE"
