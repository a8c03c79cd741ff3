#!/usr/bin/env bash
# deploy/image/build.sh DIR: builds, from a clone of this repository,
#   DIR/k3sdoctor            a static, stripped x86-64 Linux executable;
#   DIR/k3sdoctor-image.tar  an OCI image archive holding just that binary, named
#                            localhost/k3sdoctor:VERSION (the image deploy/ runs);
#   DIR/SHA256SUMS           the checksums of both, for the copies on the nodes.
# Needs cargo (Rust with the x86_64-unknown-linux-gnu target), glibc's static libraries
# (Debian: libc6-dev) and python3; no container daemon, no registry, no base image.
#
# Static with glibc: `crt-static` links libc.a. Since glibc 2.34 the `files` and `dns` NSS
# services are inside libc itself, so the static binary resolves names from /etc/hosts and
# through /etc/resolv.conf without any NSS module on the host (.ci/check-image tests both in
# an empty chroot). The linker's warning that getaddrinfo "requires at runtime the shared
# libraries" concerns other NSS services (ldap, mdns, ...), which k3sdoctor never asks for.
#
# Reproducible: the image's timestamps come from SOURCE_DATE_EPOCH (default: the commit's time),
# paths in the binary are remapped, and the archive's entries are sorted; the same binary always
# gives the same image digest.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: deploy/image/build.sh DIR" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
target=x86_64-unknown-linux-gnu

if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH

# The paths of this clone and of cargo's registry would otherwise end up in panic messages, and
# make the binary depend on where it was built.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
export RUSTFLAGS="-C target-feature=+crt-static --remap-path-prefix=$repo=/k3sdoctor --remap-path-prefix=$cargo_home=/cargo"
# --target keeps RUSTFLAGS off build scripts and proc macros, which run on this machine.
(cd "$repo" && cargo build --locked --profile dist --target "$target" --bin k3sdoctor)
target_dir=${CARGO_TARGET_DIR:-$repo/target}
case $target_dir in /*) ;; *) target_dir=$repo/$target_dir ;; esac
install -m 0755 "$target_dir/$target/dist/k3sdoctor" "$out/k3sdoctor"

version=$("$out/k3sdoctor" --version | awk '{print $2}')
# The labels name where the source is: the clone's origin (K3SDOCTOR_SOURCE overrides it) and
# the commit.
revision=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
source_url=${K3SDOCTOR_SOURCE:-$(git -C "$repo" remote get-url origin 2>/dev/null || echo unknown)}
python3 "$repo/deploy/image/oci_archive.py" \
  --binary "$out/k3sdoctor" \
  --name localhost/k3sdoctor \
  --version "$version" \
  --source "$source_url" \
  --revision "$revision" \
  --created "$SOURCE_DATE_EPOCH" \
  --output "$out/k3sdoctor-image.tar"
# What the copies on air-gapped nodes are checked against: sha256sum -c SHA256SUMS.
(cd "$out" && sha256sum k3sdoctor k3sdoctor-image.tar > SHA256SUMS)
ls -l "$out/k3sdoctor" "$out/k3sdoctor-image.tar"
