//! `deploy/image/sbom_from_metadata.py`, which writes the release's CycloneDX SBOM in
//! deploy/image/build.sh from `cargo metadata` and Cargo.lock: what the binary links and nothing
//! else (no dev- or build-only crates), every crate's checksum and purl, no path of the clone,
//! the same bytes for the same commit, and one line when the version is not the crate's. (CI's
//! `.ci/check-image` checks the real SBOM against the binary's `.dep-v0` section and Cargo.lock.)

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::harness::repo_path;

const TARGET: &str = "x86_64-unknown-linux-gnu";

/// Runs the script on the clone `repo`, with `metadata` (a file) instead of `cargo metadata`
/// when given; `None` when python3 is not installed.
fn sbom(
    repo: &Path,
    metadata: Option<&Path>,
    version: &str,
    output: &Path,
) -> Option<(std::process::Output, String)> {
    let mut command = Command::new("python3");
    command
        .arg(repo_path("deploy/image/sbom_from_metadata.py"))
        .args(["--repo", repo.to_str().unwrap()])
        .args(["--target", TARGET])
        .args(["--created", "1717157440"])
        .args(["--version", version])
        .args(["--revision", "0123456789abcdef"])
        .args(["--output", output.to_str().unwrap()]);
    if let Some(metadata) = metadata {
        command.args(["--metadata", metadata.to_str().unwrap()]);
    }
    let out = command.output().ok()?;
    Some((out, std::fs::read_to_string(output).unwrap_or_default()))
}

fn names(bom: &Value) -> Vec<String> {
    bom["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn package(id: &str, name: &str, source: Option<&str>, extra: Value) -> Value {
    let mut p = json!({
        "id": id, "name": name, "version": "1.0.0", "source": source,
        "description": "line one\nline two", "license": "MIT/Apache-2.0",
        "targets": [{"kind": ["lib"], "name": name, "src_path": "/nowhere/src/lib.rs"}],
    });
    p.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    p
}

fn edge(pkg: &str, kind: Option<&str>) -> Value {
    json!({"pkg": pkg, "dep_kinds": [{"kind": kind, "target": null}]})
}

/// A root that links `normal` (which links `deeper` and builds with `build_only`), and tests
/// with `dev_only`: the SBOM lists the two it links, with their checksums from Cargo.lock.
#[test]
fn only_what_the_binary_links_is_listed_with_its_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let repo = std::fs::canonicalize(dir.path()).unwrap();
    let registry = "registry+https://github.com/rust-lang/crates.io-index";
    let root_id = format!("path+file://{}#k3sdoctor@0.1.0", repo.display());
    let id = |name: &str| format!("{registry}#{name}@1.0.0");
    let root_src = repo.join("src/main.rs");
    let metadata = json!({
        "workspace_members": [root_id],
        "packages": [
            {"id": root_id, "name": "k3sdoctor", "version": "0.1.0", "source": null,
             "license": "Apache-2.0",
             "targets": [{"kind": ["bin"], "name": "k3sdoctor", "src_path": root_src},
                         {"kind": ["test"], "name": "cli", "src_path": repo.join("tests/cli/main.rs")}]},
            package(&id("normal"), "normal", Some(registry),
                    json!({"links": "normal_native", "repository": "https://example.org/normal"})),
            package(&id("deeper"), "deeper", Some(registry), json!({})),
            package(&id("build-only"), "build-only", Some(registry), json!({})),
            package(&id("dev-only"), "dev-only", Some(registry), json!({})),
        ],
        "resolve": {"nodes": [
            {"id": root_id, "deps": [edge(&id("normal"), None), edge(&id("dev-only"), Some("dev"))]},
            {"id": id("normal"), "deps": [edge(&id("deeper"), None), edge(&id("build-only"), Some("build"))]},
            {"id": id("deeper"), "deps": []},
            {"id": id("build-only"), "deps": []},
            {"id": id("dev-only"), "deps": []},
        ]},
    });
    let metadata_file = repo.join("metadata.json");
    std::fs::write(&metadata_file, metadata.to_string()).unwrap();
    let lock: String = ["normal", "deeper", "build-only", "dev-only"]
        .iter()
        .map(|n| {
            format!(
                "[[package]]\nname = \"{n}\"\nversion = \"1.0.0\"\nsource = \"{registry}\"\n\
                 checksum = \"{:064x}\"\n\n",
                n.len()
            )
        })
        .collect();
    std::fs::write(repo.join("Cargo.lock"), format!("version = 4\n\n{lock}")).unwrap();

    let output = repo.join("out.cdx.json");
    let Some((out, text)) = sbom(&repo, Some(&metadata_file), "0.1.0", &output) else {
        eprintln!("skipped: python3 is not installed");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bom: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(names(&bom), ["deeper", "normal"]);
    let normal = &bom["components"][1];
    assert_eq!(normal["purl"], "pkg:cargo/normal@1.0.0");
    assert_eq!(normal["hashes"][0]["content"], format!("{:064x}", 6));
    assert_eq!(normal["licenses"][0]["expression"], "MIT OR Apache-2.0");
    assert_eq!(normal["description"], "line one line two");
    assert_eq!(
        normal["externalReferences"],
        json!([{"type": "other", "url": "normal_native"},
               {"type": "vcs", "url": "https://example.org/normal"}])
    );
    let root = &bom["metadata"]["component"];
    assert_eq!(root["bom-ref"], "path+file://.#k3sdoctor@0.1.0");
    assert_eq!(
        root["purl"],
        "pkg:cargo/k3sdoctor@0.1.0?download_url=file://."
    );
    assert_eq!(
        root["components"],
        json!([{"type": "application", "bom-ref": "path+file://.#k3sdoctor@0.1.0 bin-target-0",
                "name": "k3sdoctor", "version": "0.1.0",
                "purl": "pkg:cargo/k3sdoctor@0.1.0?download_url=file://.#src/main.rs"}])
    );
    assert_eq!(
        bom["dependencies"][0],
        json!({"ref": "path+file://.#k3sdoctor@0.1.0", "dependsOn": [id("normal")]})
    );
    assert!(!text.contains(repo.to_str().unwrap()), "{text}");
}

/// The SBOM of this clone, as build.sh writes it: the crates the binary links (a crate only
/// built from, like cc, and the test-only ones are not), reproducible, with the commit.
#[test]
fn this_clones_sbom_lists_the_linked_crates_and_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_path(".");
    let first = dir.path().join("first.cdx.json");
    let Some((out, text)) = sbom(&repo, None, env!("CARGO_PKG_VERSION"), &first) else {
        eprintln!("skipped: python3 is not installed");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bom: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(bom["bomFormat"], "CycloneDX");
    assert_eq!(bom["specVersion"], "1.5");
    assert_eq!(bom["metadata"]["timestamp"], "2024-05-31T12:10:40Z");
    assert!(
        bom["metadata"]["properties"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "k3sdoctor:revision", "value": "0123456789abcdef"}))
    );
    let listed = names(&bom);
    for linked in ["kube-client", "rustls", "tokio", "serde_json", "ring"] {
        assert!(listed.iter().any(|n| n == linked), "{linked} missing");
    }
    for not_linked in ["cc", "tempfile", "proptest", "rcgen", "jsonschema"] {
        assert!(
            !listed.iter().any(|n| n == not_linked),
            "{not_linked} listed"
        );
    }
    let lock = std::fs::read_to_string(repo.join("Cargo.lock")).unwrap();
    for c in bom["components"].as_array().unwrap() {
        let entry = format!(
            "name = \"{}\"\nversion = \"{}\"",
            c["name"].as_str().unwrap(),
            c["version"].as_str().unwrap()
        );
        assert!(lock.contains(&entry), "{c} is not in Cargo.lock");
    }
    let canonical = std::fs::canonicalize(&repo).unwrap();
    assert!(
        !text.contains(canonical.to_str().unwrap()),
        "the clone's path is in the SBOM"
    );

    let again = dir.path().join("again.cdx.json");
    let (_, text_again) = sbom(&repo, None, env!("CARGO_PKG_VERSION"), &again).unwrap();
    assert_eq!(text_again, text, "the same commit gave another SBOM");

    // A version that is not the crate's is refused, with one line.
    let (out, _) = sbom(&repo, None, "9.9.9", &dir.path().join("other.cdx.json")).unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("Cargo.toml says k3sdoctor 0.1.0, the binary says 9.9.9"),
        "{stderr}"
    );
}
