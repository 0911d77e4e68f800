#!/bin/sh
# Makes the image's default base, debian:bookworm-slim, offline from the Debian archive (no
# Docker Hub): mmdebstrap --variant=minbase with bookworm-slim's path excludes, fixed timestamps
# (SOURCE_DATE_EPOCH), loaded with `docker load` under a fixed config and tagged
# debian:bookworm-slim in the daemon it talks to, so that docker/Dockerfile's default
# `ARG XRGATE_BASE=debian:bookworm-slim` builds without a registry. The same root filesystem
# gives the same image ID (printed), a local way to pin the base reproducibly:
#   docker build --build-arg XRGATE_BASE=<that sha256:...> ...
#
#   sh docker/base-image.sh [CACHE_DIR]     prints the image ID (sha256:...) on stdout
#
# The root filesystem tarball is cached in CACHE_DIR (default /var/lib/xrgate-base): a second run
# only loads it (delete CACHE_DIR to take the archive's current state, security updates
# included). Needs root (mmdebstrap --mode=root) and the packages mmdebstrap, docker.io
# (docker/install-deps.sh --test installs them). DOCKER (default "docker") is the client command,
# e.g. "docker -H unix:///run/other.sock"; MIRROR (default http://deb.debian.org/debian) the archive.
# On a host that pulls from Docker Hub this is not needed (and it replaces the local tag).
set -eu
cache="${1:-/var/lib/xrgate-base}"
DOCKER="${DOCKER:-docker}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
SECURITY="${SECURITY:-${MIRROR%/debian}/debian-security}"
# 2025-05-20T00:00:00Z: file times in the tarball and the image's creation time
SOURCE_DATE_EPOCH=1747699200
export SOURCE_DATE_EPOCH
created="2025-05-20T00:00:00Z"

mkdir -p "$cache"
rootfs="$cache/bookworm-slim-rootfs.tar"
if [ ! -s "$rootfs" ]; then
    echo "base-image: mmdebstrap bookworm minbase from $MIRROR into $rootfs" >&2
    mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/lintian/*' \
        bookworm "$rootfs.part" \
        "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
        "deb $SECURITY bookworm-security main"
    mv "$rootfs.part" "$rootfs"
fi

# a docker-archive (what `docker save` writes) with a fixed config: image ID = sha256(config)
diff_id="sha256:$(sha256sum "$rootfs" | cut -d' ' -f1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '{"architecture":"amd64","config":{"Cmd":["bash"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"created":"%s","history":[{"created":"%s","created_by":"docker/base-image.sh: mmdebstrap --variant=minbase bookworm"}],"os":"linux","rootfs":{"diff_ids":["%s"],"type":"layers"}}' \
    "$created" "$created" "$diff_id" >"$work/config.json"
id="$(sha256sum "$work/config.json" | cut -d' ' -f1)"
mv "$work/config.json" "$work/$id.json"
printf '[{"Config":"%s.json","RepoTags":["debian:bookworm-slim"],"Layers":["layer.tar"]}]' "$id" \
    >"$work/manifest.json"
ln -s "$rootfs" "$work/layer.tar"
if ! $DOCKER image inspect "sha256:$id" >/dev/null 2>&1; then
    tar -C "$work" --dereference --owner=0 --group=0 --mtime=@0 -cf - "$id.json" manifest.json \
        layer.tar | $DOCKER load >&2
fi
$DOCKER tag "sha256:$id" debian:bookworm-slim >&2
echo "sha256:$id"
