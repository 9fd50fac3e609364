#!/usr/bin/env bash
# A base image for deploy/Dockerfile made from Debian's own packages, for a Docker engine that
# reaches no image registry: debootstrap (minbase) with python3, python3-venv, ca-certificates
# and git, imported as NAME (default selfhub-base:bookworm). Nothing is done when the engine
# already has NAME. Needs root, debootstrap and a running engine; about a minute.
#
#   deploy/debian-base.sh [NAME]
#   docker build -f deploy/Dockerfile --build-arg BASE_IMAGE=selfhub-base:bookworm -t selfhub .
set -euo pipefail

name="${1:-selfhub-base:bookworm}"
suite="${SELFHUB_BASE_SUITE:-bookworm}"

if docker image inspect "$name" >/dev/null 2>&1; then
  echo "base image $name: present"
  exit 0
fi

rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
echo "base image $name: debootstrap $suite" >&2
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,git \
  "$suite" "$rootfs" >"$rootfs.log" 2>&1 || { tail -20 "$rootfs.log" >&2; rm -f "$rootfs.log"; exit 1; }
rm -f "$rootfs.log"
# What an image needs none of: the downloaded packages and the package lists.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' \
  - "$name" >/dev/null
echo "base image $name: made" >&2
