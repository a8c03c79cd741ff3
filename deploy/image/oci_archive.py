#!/usr/bin/env python3
"""Writes the k3sdoctor OCI image archive (an oci-layout tarball) without a container daemon.

One layer: the static binary as /usr/local/bin/k3sdoctor and the CA bundle of the build machine
as /etc/ssl/certs/ca-certificates.crt (only used for a --kubeconfig whose cluster names no CA:
kube-rs then verifies with the system roots, which rustls-native-certs reads from that file).
The entrypoint is the binary, the user 65532 (numeric: the image has no /etc/passwd).

Reproducible: every timestamp is --created (SOURCE_DATE_EPOCH), owners are 0:0 with no names,
entries are sorted, gzip carries no name or time, and the JSON is written with sorted keys, so
the same inputs always give the same bytes and the same digests.

index.json names the image twice with the same full reference: as
org.opencontainers.image.ref.name (what skopeo's oci-archive:FILE:REF and the OCI spec use) and
as io.containerd.image.name, which containerd's importer (`k3s ctr images import`, and k3s's
import of /var/lib/rancher/{k3s,rke2}/agent/images/ at start) takes unchanged, as it does for
`docker save` archives (containerd images/archive/importer.go, imageName).
"""

import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
LICENSE = "Apache-2.0"
USER = "65532:65532"


def tar_bytes(entries, mtime):
    """A ustar archive of (path, mode, data or None for a directory), sorted by path."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path, mode, data in sorted(entries, key=lambda e: e[0]):
            info = tarfile.TarInfo(path)
            info.mtime = mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mode = mode
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def canonical_json(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--name", required=True, help="repository, e.g. localhost/k3sdoctor")
    parser.add_argument("--version", required=True)
    parser.add_argument("--created", required=True, type=int, help="SOURCE_DATE_EPOCH")
    parser.add_argument("--source", required=True, help="URL of the source repository")
    parser.add_argument("--revision", required=True, help="commit the binary was built from")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()

    try:
        with open(args.binary, "rb") as f:
            binary = f.read()
        with open(CA_BUNDLE, "rb") as f:
            ca_bundle = f.read()
    except OSError as e:
        sys.exit(f"oci_archive.py: error: cannot read {e.filename}: {e.strerror}"
                 + ("; install Debian's ca-certificates" if e.filename == CA_BUNDLE else ""))

    mtime = args.created
    created = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    reference = f"{args.name}:{args.version}"

    layer_tar = tar_bytes([
        ("etc", 0o755, None),
        ("etc/ssl", 0o755, None),
        ("etc/ssl/certs", 0o755, None),
        ("etc/ssl/certs/ca-certificates.crt", 0o644, ca_bundle),
        ("usr", 0o755, None),
        ("usr/local", 0o755, None),
        ("usr/local/bin", 0o755, None),
        ("usr/local/bin/k3sdoctor", 0o755, binary),
    ], mtime)
    gz = io.BytesIO()
    with gzip.GzipFile(filename="", fileobj=gz, mode="wb", compresslevel=9, mtime=0) as f:
        f.write(layer_tar)
    layer = gz.getvalue()

    labels = {
        "org.opencontainers.image.title": "k3sdoctor",
        "org.opencontainers.image.description":
            "Find and safely repair k3s/RKE2 leader-lock splits and etcd snapshot ConfigMap drift",
        "org.opencontainers.image.version": args.version,
        "org.opencontainers.image.source": args.source,
        "org.opencontainers.image.revision": args.revision,
        "org.opencontainers.image.licenses": LICENSE,
        "org.opencontainers.image.created": created,
    }
    config = canonical_json({
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "config": {
            "User": USER,
            "Entrypoint": ["/usr/local/bin/k3sdoctor"],
            "Env": ["PATH=/usr/local/bin"],
            "WorkingDir": "/",
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [digest(layer_tar)]},
        "history": [{"created": created, "created_by": "deploy/image/build.sh"}],
    })
    manifest = canonical_json({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": digest(config),
            "size": len(config),
        },
        "layers": [{
            "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
            "digest": digest(layer),
            "size": len(layer),
        }],
        "annotations": labels,
    })
    index = canonical_json({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": digest(manifest),
            "size": len(manifest),
            "platform": {"architecture": "amd64", "os": "linux"},
            "annotations": {
                "org.opencontainers.image.ref.name": reference,
                "io.containerd.image.name": reference,
            },
        }],
    })

    entries = [
        ("oci-layout", 0o644, canonical_json({"imageLayoutVersion": "1.0.0"})),
        ("index.json", 0o644, index),
        ("blobs", 0o755, None),
        ("blobs/sha256", 0o755, None),
    ]
    for blob in (config, manifest, layer):
        entries.append(("blobs/sha256/" + digest(blob)[len("sha256:"):], 0o644, blob))
    archive = tar_bytes(entries, mtime)

    # Written next to the output and renamed: never a half-written archive under its name.
    partial = args.output + ".partial"
    with open(partial, "wb") as f:
        f.write(archive)
    os.replace(partial, args.output)
    print(f"{reference} {digest(manifest)} ({len(archive)} bytes)")


if __name__ == "__main__":
    main()
