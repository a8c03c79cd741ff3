#!/usr/bin/env python3
"""Writes the CycloneDX 1.5 SBOM of the k3sdoctor binary from `cargo metadata` and Cargo.lock.

What the binary links is the dependency graph cargo resolved for one target and the default
features, without dev- and build-dependencies: `cargo metadata --filter-platform TARGET`
gives that graph (its edges name their kind), Cargo.lock each registry crate's checksum. This
is what the CycloneDX project's cargo plugin reads too; writing it here spares every fresh
machine the plugin's build (210 s of CPU) for a document a short walk of the graph gives.

The output is reproducible: no clock, no random serial number, no path of the clone. The time
is --created (SOURCE_DATE_EPOCH), the serial number a UUID derived from the rest of the
document, and the commit is recorded as the property k3sdoctor:revision.
"""

import argparse
import datetime
import hashlib
import json
import os
import subprocess
import sys
import tomllib
import uuid

CRATES_IO = "registry+https://github.com/rust-lang/crates.io-index"


def fail(message):
    sys.exit(f"sbom_from_metadata.py: error: {message}")


def cargo_metadata(repo, target):
    """The resolved graph for `target` with the default features, as cargo prints it."""
    try:
        out = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked",
             "--filter-platform", target],
            cwd=repo, check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or str(e)
        fail(f"cargo metadata failed in {repo}: {detail.strip()}")
    return json.loads(out.stdout)


def lock_checksums(repo):
    """(name, version) -> sha256 of each registry crate, from Cargo.lock."""
    try:
        with open(os.path.join(repo, "Cargo.lock"), "rb") as f:
            lock = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        fail(f"cannot read Cargo.lock in {repo}: {e}")
    return {(p["name"], p["version"]): p["checksum"]
            for p in lock.get("package", []) if "checksum" in p}


def linked_packages(metadata, root_name):
    """The ids of the root package and of every package it links: edges of kind normal only,
    followed from the root (a crate reached only as a build-dependency runs at build time and is
    not in the binary)."""
    packages = {p["id"]: p for p in metadata["packages"]}
    roots = [p["id"] for p in metadata["packages"]
             if p["name"] == root_name and p["id"] in metadata["workspace_members"]]
    if len(roots) != 1:
        fail(f"the workspace has no single package named {root_name}")
    nodes = {n["id"]: n for n in metadata["resolve"]["nodes"]}
    seen, todo, edges = set(), [roots[0]], {}
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        linked = sorted({dep["pkg"] for dep in nodes[pid]["deps"]
                         if any(k["kind"] is None for k in dep["dep_kinds"])},
                        key=lambda d: (packages[d]["name"], packages[d]["version"], d))
        edges[pid] = linked
        todo.extend(linked)
    return roots[0], packages, edges


def spdx_expression(license):
    """Cargo once allowed "MIT/Apache-2.0"; SPDX spells that choice "MIT OR Apache-2.0"."""
    return " OR ".join(part.strip() for part in license.split("/"))


def purl(package):
    base = f"pkg:cargo/{package['name']}@{package['version']}"
    # A package from the clone has no registry to name: the purl says it was built from here.
    if package.get("source") is None:
        base += "?download_url=file://."
    return base


def target_components(package, repo):
    """The library and binary targets of the root package, as the plugin lists them under it."""
    out = []
    for index, target in enumerate(package["targets"]):
        kinds = target["kind"]
        if "lib" in kinds:
            kind = "library"
        elif "bin" in kinds:
            kind = "application"
        else:
            continue
        source = os.path.relpath(target["src_path"], repo)
        out.append({
            "type": kind,
            "bom-ref": f"{package['id']} bin-target-{index}",
            "name": target["name"],
            "version": package["version"],
            "purl": f"{purl(package)}#{source}",
        })
    return out


def component(package, checksums, kind):
    """One package as a CycloneDX component."""
    c = {
        "type": kind,
        "bom-ref": package["id"],
        "name": package["name"],
        "version": package["version"],
        "scope": "required",
        "purl": purl(package),
    }
    if package.get("description"):
        c["description"] = package["description"].replace("\n", " ")
    if package.get("authors"):
        c["author"] = ", ".join(package["authors"])
    if package.get("license"):
        c["licenses"] = [{"expression": spdx_expression(package["license"])}]
    checksum = checksums.get((package["name"], package["version"]))
    if checksum and package.get("source") == CRATES_IO:
        c["hashes"] = [{"alg": "SHA-256", "content": checksum}]
    references = []
    # `links` names the native library a crate links; CycloneDX has no better type for it.
    for field, kind_of_reference in (("documentation", "documentation"), ("homepage", "website"),
                                     ("links", "other"), ("repository", "vcs")):
        if package.get(field):
            references.append({"type": kind_of_reference, "url": package[field]})
    if references:
        c["externalReferences"] = references
    return c


def relative_id(pid, repo):
    """A path package's id names the clone's directory; the SBOM names it '.' instead, so the
    document does not depend on where it was built."""
    return pid.replace("file://" + repo, "file://.")


def build_sbom(metadata, checksums, repo, root_name, target, version, revision, created):
    root_id, packages, edges = linked_packages(metadata, root_name)
    root = packages[root_id]
    if root["version"] != version:
        fail(f"Cargo.toml says {root_name} {root['version']}, the binary says {version}")
    root_component = component(root, checksums, "application")
    root_component["components"] = target_components(root, repo)
    components = [component(packages[pid], checksums, "library")
                  for pid in sorted(edges, key=lambda p: (packages[p]["name"],
                                                         packages[p]["version"]))
                  if pid != root_id]
    dependencies = [{"ref": pid, "dependsOn": edges[pid]} if edges[pid] else {"ref": pid}
                    for pid in sorted(edges)]
    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "version": 1,
        "metadata": {
            "timestamp": datetime.datetime.fromtimestamp(
                created, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tools": [{"name": "deploy/image/sbom_from_metadata.py",
                       "vendor": "k3sdoctor", "version": version}],
            "component": root_component,
            "properties": [
                {"name": "cdx:rustc:sbom:target:triple", "value": target},
                {"name": "k3sdoctor:revision", "value": revision},
            ],
        },
        "components": components,
        "dependencies": dependencies,
    }
    text = json.dumps(bom, sort_keys=True, indent=2, ensure_ascii=False)
    bom = json.loads(relative_id(text, repo))
    body = json.dumps(bom, sort_keys=True, indent=2, ensure_ascii=False)
    serial = uuid.UUID(bytes=hashlib.sha256(body.encode()).digest()[:16], version=5)
    bom["serialNumber"] = f"urn:uuid:{serial}"
    return bom


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="the clone to describe")
    parser.add_argument("--target", required=True, help="the target triple built")
    parser.add_argument("--created", required=True, type=int, help="SOURCE_DATE_EPOCH")
    parser.add_argument("--version", required=True, help="k3sdoctor's version")
    parser.add_argument("--revision", required=True, help="the commit, or 'unknown'")
    parser.add_argument("--metadata", help="cargo metadata's JSON, instead of running cargo")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()

    repo = os.path.realpath(args.repo)
    if args.metadata:
        try:
            with open(args.metadata, encoding="utf-8") as f:
                metadata = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"cannot read {args.metadata}: {e}")
    else:
        metadata = cargo_metadata(repo, args.target)
    bom = build_sbom(metadata, lock_checksums(repo), repo, "k3sdoctor", args.target,
                     args.version, args.revision, args.created)

    partial = args.output + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(json.dumps(bom, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    os.replace(partial, args.output)
    print(f"{os.path.basename(args.output)}: CycloneDX {bom['specVersion']}, "
          f"{len(bom['components'])} components")


if __name__ == "__main__":
    main()
