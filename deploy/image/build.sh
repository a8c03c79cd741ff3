#!/usr/bin/env bash
# deploy/image/build.sh DIR: builds, from a clone of this repository,
#   DIR/k3sdoctor                      a static, stripped x86-64 Linux executable, with its
#                                      dependency list embedded (cargo auditable: .dep-v0);
#   DIR/k3sdoctor-image.tar            an OCI image archive holding just that binary, named
#                                      localhost/k3sdoctor:VERSION (the image deploy/ runs);
#   DIR/k3sdoctor.cdx.json             its SBOM: CycloneDX JSON of what the binary links, for
#                                      the target and the features built (sbom_from_metadata.py);
#   DIR/k3sdoctor-linux-amd64.tar.gz   the krew archive (the binary and LICENSE) and
#   DIR/k3s-doctor.yaml                its krew manifest (deploy/krew/k3s-doctor.yaml, filled in);
#   DIR/SHA256SUMS                     the checksums of all of them: sha256sum -c SHA256SUMS.
# Needs cargo (Rust with the x86_64-unknown-linux-gnu target) with the cargo-auditable plugin
# (.ci/run installs the version it pins), glibc's static libraries (Debian: libc6-dev) and
# python3 (3.11 or later, for tomllib); no container daemon, no registry, no base image.
#
# Static with glibc: `crt-static` links libc.a. Since glibc 2.34 the `files` and `dns` NSS
# services are inside libc itself, so the static binary resolves names from /etc/hosts and
# through /etc/resolv.conf without any NSS module on the host (.ci/check-image tests both in
# an empty chroot). The linker's warning that getaddrinfo "requires at runtime the shared
# libraries" concerns other NSS services (ldap, mdns, ...), which k3sdoctor never asks for.
#
# Reproducible: the image's timestamps come from SOURCE_DATE_EPOCH (default: the commit's time),
# paths in the binary are remapped, and the archives' entries are sorted; the same binary always
# gives the same image digest, krew archive and SBOM.
#
# Optional: K3SDOCTOR_SOURCE, the URL of the source repository for the image label and the krew
# homepage (default: the clone's origin when it is a URL, else "unknown"); K3SDOCTOR_RELEASE_URL,
# where the krew archives are published (the manifest's uri is RELEASE_URL/vVERSION/ARCHIVE).
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

if ! (cd "$repo" && cargo auditable --version >/dev/null 2>&1); then
  echo "build.sh: cargo-auditable is not installed; install it with: cargo install --locked cargo-auditable" >&2
  exit 1
fi

# The paths of this clone and of cargo's registry would otherwise end up in panic messages, and
# make the binary depend on where it was built.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
export RUSTFLAGS="-C target-feature=+crt-static --remap-path-prefix=$repo=/k3sdoctor --remap-path-prefix=$cargo_home=/cargo"
# --target keeps RUSTFLAGS off build scripts and proc macros, which run on this machine.
# `cargo auditable build` is `cargo build` that also links the dependency tree, as compressed
# JSON, into a .dep-v0 section, which scanners (cargo audit bin, trivy, grype, syft) read.
(cd "$repo" && cargo auditable build --locked --profile dist --target "$target" --bin k3sdoctor)
target_dir=${CARGO_TARGET_DIR:-$repo/target}
case $target_dir in /*) ;; *) target_dir=$repo/$target_dir ;; esac
install -m 0755 "$target_dir/$target/dist/k3sdoctor" "$out/k3sdoctor"

version=$("$out/k3sdoctor" --version | awk '{print $2}')
# The labels name where the source is and the commit. The origin is used only when it is a URL
# (a local path names nothing a reader can fetch), and without any user:password@ part.
revision=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "${K3SDOCTOR_SOURCE:-}" ]; then
  source_url=$K3SDOCTOR_SOURCE
else
  source_url=$(git -C "$repo" remote get-url origin 2>/dev/null || echo unknown)
  case $source_url in
    https://* | http://*) source_url=$(printf '%s' "$source_url" | sed -E 's#^(https?://)[^/@]*@#\1#') ;;
    *) source_url=unknown ;;
  esac
fi
python3 "$repo/deploy/image/oci_archive.py" \
  --binary "$out/k3sdoctor" \
  --name localhost/k3sdoctor \
  --version "$version" \
  --source "$source_url" \
  --revision "$revision" \
  --created "$SOURCE_DATE_EPOCH" \
  --output "$out/k3sdoctor-image.tar"

# The SBOM of the binary built above: its target, its default features, every crate it links
# (no dev- or build-dependencies), read from cargo metadata and Cargo.lock; reproducible (no
# clock, no random serial number, no path of this clone).
python3 "$repo/deploy/image/sbom_from_metadata.py" \
  --repo "$repo" \
  --target "$target" \
  --created "$SOURCE_DATE_EPOCH" \
  --version "$version" \
  --revision "$revision" \
  --output "$out/k3sdoctor.cdx.json"

source_homepage=unknown
case $source_url in https://* | http://*) source_homepage=${source_url%.git} ;; esac
python3 "$repo/deploy/krew/krew_archive.py" \
  --binary "$out/k3sdoctor" \
  --license "$repo/LICENSE" \
  --template "$repo/deploy/krew/k3s-doctor.yaml" \
  --version "$version" \
  --homepage "$source_homepage" \
  --release-url "${K3SDOCTOR_RELEASE_URL:-https://releases.invalid/k3sdoctor}" \
  --created "$SOURCE_DATE_EPOCH" \
  --out-dir "$out"

# What the copies on air-gapped nodes are checked against: sha256sum -c SHA256SUMS.
(cd "$out" && sha256sum k3sdoctor k3sdoctor-image.tar k3sdoctor.cdx.json \
  k3sdoctor-linux-amd64.tar.gz k3s-doctor.yaml > SHA256SUMS)
ls -l "$out"
