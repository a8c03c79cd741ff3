#!/usr/bin/env python3
"""Makes cargo cyclonedx's SBOM of k3sdoctor reproducible and moves it to its place.

cargo cyclonedx (the CycloneDX project's cargo plugin) writes a fresh random serialNumber and
the current time into every SBOM, and names the root crate by the path of the clone it ran in.
The same commit should give the same SBOM, as it gives the same binary and image: the time
becomes --created (SOURCE_DATE_EPOCH), the serial number a UUID derived from the rest of the
document, and the clone's path the relative path "." . The SBOM also records the commit.
The input is removed: it was written beside Cargo.toml, inside the clone.
"""

import argparse
import datetime
import hashlib
import json
import os
import sys
import uuid


def replace_strings(value, old, new):
    """`value` with `old` replaced by `new` in every string it holds."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [replace_strings(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: replace_strings(v, old, new) for k, v in value.items()}
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="the SBOM cargo cyclonedx wrote")
    parser.add_argument("--repo", required=True, help="the clone cargo cyclonedx ran in")
    parser.add_argument("--created", required=True, type=int, help="SOURCE_DATE_EPOCH")
    parser.add_argument("--version", required=True, help="k3sdoctor's version")
    parser.add_argument("--revision", required=True, help="the commit, or 'unknown'")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()

    try:
        with open(args.input, encoding="utf-8") as f:
            bom = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"sbom.py: error: cannot read the SBOM cargo cyclonedx wrote ({args.input}): {e}")
    finally:
        if os.path.exists(args.input):
            os.remove(args.input)

    if bom.get("bomFormat") != "CycloneDX":
        sys.exit(f"sbom.py: error: {args.input} is not a CycloneDX document")
    component = bom.get("metadata", {}).get("component", {})
    if component.get("name") != "k3sdoctor" or component.get("version") != args.version:
        sys.exit(f"sbom.py: error: the SBOM describes {component.get('name')} "
                 f"{component.get('version')}, not k3sdoctor {args.version}")

    repo = os.path.realpath(args.repo)
    bom = replace_strings(bom, "file://" + repo, "file://.")
    bom = replace_strings(bom, repo, ".")
    bom.pop("serialNumber", None)
    metadata = bom["metadata"]
    metadata["timestamp"] = datetime.datetime.fromtimestamp(
        args.created, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    properties = [p for p in metadata.get("properties", [])
                  if p.get("name") != "k3sdoctor:revision"]
    properties.append({"name": "k3sdoctor:revision", "value": args.revision})
    metadata["properties"] = properties
    body = json.dumps(bom, sort_keys=True, indent=2, ensure_ascii=False)
    serial = uuid.UUID(bytes=hashlib.sha256(body.encode()).digest()[:16], version=5)
    bom["serialNumber"] = f"urn:uuid:{serial}"

    partial = args.output + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(json.dumps(bom, sort_keys=True, indent=2, ensure_ascii=False) + "\n")
    os.replace(partial, args.output)
    print(f"{os.path.basename(args.output)}: CycloneDX {bom.get('specVersion')}, "
          f"{len(bom.get('components', []))} components")


if __name__ == "__main__":
    main()
