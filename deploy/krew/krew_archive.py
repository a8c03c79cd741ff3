#!/usr/bin/env python3
"""Writes the krew archive of k3sdoctor and its filled-in plugin manifest.

krew installs a plugin from a .tar.gz per platform whose sha256 the manifest names: OUT-DIR gets
k3sdoctor-linux-amd64.tar.gz (the binary and LICENSE at its root) and k3s-doctor.yaml, the
template deploy/krew/k3s-doctor.yaml with @VERSION@, @HOMEPAGE@, @URI@ and @SHA256@ filled in.

Reproducible, as the image is: every timestamp is --created (SOURCE_DATE_EPOCH), owners are 0:0
with no names, entries are sorted and gzip carries no name or time, so the same binary always
gives the same archive and the same sha256.
"""

import argparse
import gzip
import hashlib
import io
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "image"))
import oci_archive  # noqa: E402  the tar writer the image uses

ARCHIVE = "k3sdoctor-linux-amd64.tar.gz"
MANIFEST = "k3s-doctor.yaml"


def tar_gz(entries, mtime):
    """A gzip-compressed ustar archive of (path, mode, data), sorted by path: the image's own
    tar writer (deploy/image/oci_archive.py), gzipped with no name or time."""
    gz = io.BytesIO()
    with gzip.GzipFile(filename="", fileobj=gz, mode="wb", compresslevel=9, mtime=0) as f:
        f.write(oci_archive.tar_bytes(entries, mtime))
    return gz.getvalue()


def write_atomically(path, data):
    """Written next to its name and renamed: never a half-written file under the name."""
    partial = path + ".partial"
    with open(partial, "wb") as f:
        f.write(data)
    os.replace(partial, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--license", required=True)
    parser.add_argument("--template", required=True, help="deploy/krew/k3s-doctor.yaml")
    parser.add_argument("--version", required=True, help="e.g. 0.1.0 (the manifest adds the v)")
    parser.add_argument("--homepage", required=True, help="a URL, or 'unknown' to leave it out")
    parser.add_argument("--release-url", required=True,
                        help="where the archives are published: the archive's URL is "
                             "RELEASE_URL/vVERSION/" + ARCHIVE)
    parser.add_argument("--created", required=True, type=int, help="SOURCE_DATE_EPOCH")
    parser.add_argument("--out-dir", required=True)
    args = parser.parse_args()

    if not re.fullmatch(r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?", args.version):
        sys.exit(f"krew_archive.py: error: version {args.version!r} is not semver (krew needs one)")
    try:
        with open(args.binary, "rb") as f:
            binary = f.read()
        with open(args.license, "rb") as f:
            license_text = f.read()
        with open(args.template, encoding="utf-8") as f:
            template = f.read()
    except OSError as e:
        sys.exit(f"krew_archive.py: error: cannot read {e.filename}: {e.strerror}")

    archive = tar_gz([("k3sdoctor", 0o755, binary), ("LICENSE", 0o644, license_text)],
                     args.created)
    sha256 = hashlib.sha256(archive).hexdigest()
    # The template's opening comment is about the template; the written manifest says what it is.
    body = template[template.index("apiVersion:"):]
    manifest = (f"# kubectl k3s-doctor {args.version}: written by deploy/image/build.sh from "
                f"deploy/krew/k3s-doctor.yaml.\n# kubectl krew install --manifest={MANIFEST} "
                f"--archive={ARCHIVE}\n" + body)
    if args.homepage == "unknown":
        manifest = re.sub(r'(?m)^\s*homepage: "@HOMEPAGE@"\n', "", manifest)
    values = {
        "VERSION": args.version,
        "HOMEPAGE": args.homepage,
        "URI": f"{args.release_url.rstrip('/')}/v{args.version}/{ARCHIVE}",
        "SHA256": sha256,
    }
    for key, value in values.items():
        manifest = manifest.replace(f"@{key}@", value)
    left = re.findall(r"@[A-Z0-9_]+@", manifest)
    if left:
        sys.exit(f"krew_archive.py: error: {args.template} has placeholders this script does "
                 f"not fill: {', '.join(sorted(set(left)))}")

    write_atomically(os.path.join(args.out_dir, ARCHIVE), archive)
    write_atomically(os.path.join(args.out_dir, MANIFEST), manifest.encode("utf-8"))
    print(f"{ARCHIVE} sha256:{sha256} ({len(archive)} bytes), {MANIFEST}")


if __name__ == "__main__":
    main()
