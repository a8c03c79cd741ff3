//! The krew plugin manifest of `kubectl k3s-doctor`: the template in deploy/krew and what
//! `deploy/krew/krew_archive.py` (run by deploy/image/build.sh) writes from it, on a stand-in
//! binary. The written manifest validates against a JSON Schema of krew's documented fields
//! (tests/fixtures/krew/plugin.schema.json), names the sha256 of the archive beside it, and
//! that archive holds every file the manifest installs; two runs give the same bytes.

use std::io::Read;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::harness::repo_path;

const ARCHIVE: &str = "k3sdoctor-linux-amd64.tar.gz";
const MANIFEST: &str = "k3s-doctor.yaml";

/// The errors of `manifest` against the krew schema, one line each.
fn krew_schema_errors(manifest: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_path("tests/fixtures/krew/plugin.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    validator
        .iter_errors(manifest)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn yaml(text: &str) -> Value {
    serde_yaml_ng::from_str(text).unwrap()
}

/// Runs the packer; `None` when python3 is not installed.
fn package(binary: &Path, homepage: &str, out_dir: &Path) -> Option<std::process::Output> {
    let out = Command::new("python3")
        .arg(repo_path("deploy/krew/krew_archive.py"))
        .args(["--binary", binary.to_str().unwrap()])
        .args(["--license", repo_path("LICENSE").to_str().unwrap()])
        .args([
            "--template",
            repo_path("deploy/krew/k3s-doctor.yaml").to_str().unwrap(),
        ])
        .args(["--version", env!("CARGO_PKG_VERSION")])
        .args(["--homepage", homepage])
        .args(["--release-url", "https://example.com/k3sdoctor/releases/"])
        .args(["--created", "1717157440"])
        .args(["--out-dir", out_dir.to_str().unwrap()])
        .output()
        .ok()?;
    Some(out)
}

/// The archive's files by name.
fn archive_files(bytes: &[u8]) -> Vec<(String, Vec<u8>, u32)> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut tar)
        .unwrap();
    let mut archive = tar::Archive::new(tar.as_slice());
    archive
        .entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_str().unwrap().to_string();
            let mode = e.header().mode().unwrap();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (name, data, mode)
        })
        .collect()
}

#[test]
fn the_built_krew_manifest_validates_and_names_its_archive() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("k3sdoctor");
    std::fs::write(&binary, b"\x7fELF stand-in for the static binary").unwrap();
    let first = dir.path().join("first");
    let again = dir.path().join("again");
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&again).unwrap();
    let Some(out) = package(&binary, "https://example.com/k3sdoctor", &first) else {
        eprintln!("skipped: python3 is not installed");
        return;
    };
    assert!(
        out.status.success(),
        "krew_archive.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let text = std::fs::read_to_string(first.join(MANIFEST)).unwrap();
    let manifest = yaml(&text);
    let errors = krew_schema_errors(&manifest);
    assert!(
        errors.is_empty(),
        "{MANIFEST} is not a valid krew manifest:\n{}\n{text}",
        errors.join("\n")
    );
    // krew requires the manifest's file to be named after the plugin.
    assert_eq!(manifest["metadata"]["name"], "k3s-doctor");
    let spec = &manifest["spec"];
    assert_eq!(spec["version"], format!("v{}", env!("CARGO_PKG_VERSION")));
    assert_eq!(spec["homepage"], "https://example.com/k3sdoctor");

    let archive = std::fs::read(first.join(ARCHIVE)).unwrap();
    let [platform] = spec["platforms"].as_array().unwrap().as_slice() else {
        panic!("one platform: {spec}");
    };
    assert_eq!(
        platform["selector"]["matchLabels"],
        serde_json::json!({"os": "linux", "arch": "amd64"})
    );
    assert_eq!(
        platform["sha256"].as_str().unwrap(),
        format!("{:x}", Sha256::digest(&archive)),
        "the manifest names the sha256 of the archive beside it"
    );
    assert_eq!(
        platform["uri"],
        format!(
            "https://example.com/k3sdoctor/releases/v{}/{ARCHIVE}",
            env!("CARGO_PKG_VERSION")
        )
    );
    let files = archive_files(&archive);
    let names: Vec<&str> = files.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["LICENSE", "k3sdoctor"]);
    for op in platform["files"].as_array().unwrap() {
        assert!(names.contains(&op["from"].as_str().unwrap()), "{op}");
    }
    let bin = platform["bin"].as_str().unwrap();
    let (_, data, mode) = files.iter().find(|(n, _, _)| n == bin).unwrap();
    assert_eq!(data.as_slice(), std::fs::read(&binary).unwrap().as_slice());
    assert_eq!(mode & 0o111, 0o111, "{bin} is executable");

    // The same binary gives the same archive and manifest; without a homepage the field is
    // left out rather than written as "unknown".
    let out = package(&binary, "unknown", &again).unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read(again.join(ARCHIVE)).unwrap(), archive);
    let without = yaml(&std::fs::read_to_string(again.join(MANIFEST)).unwrap());
    assert!(without["spec"].get("homepage").is_none(), "{without}");
    assert!(krew_schema_errors(&without).is_empty());
}

/// The template in the repository is the manifest with four placeholders and nothing else to
/// fill: with them replaced it validates.
#[test]
fn the_krew_template_validates_once_filled() {
    let template = std::fs::read_to_string(repo_path("deploy/krew/k3s-doctor.yaml")).unwrap();
    let filled = template
        .replace("@VERSION@", "1.2.3")
        .replace("@HOMEPAGE@", "https://example.com/k3sdoctor")
        .replace("@URI@", "https://example.com/k3sdoctor.tar.gz")
        .replace("@SHA256@", &"0123456789abcdef".repeat(4));
    assert!(!filled.contains('@'), "an unknown placeholder: {filled}");
    let errors = krew_schema_errors(&yaml(&filled));
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The schema check can fail: each of krew's rules rejects a manifest that breaks it.
#[test]
fn the_krew_schema_rejects_what_krew_rejects() {
    let template = std::fs::read_to_string(repo_path("deploy/krew/k3s-doctor.yaml")).unwrap();
    let good = template
        .replace("@VERSION@", "1.2.3")
        .replace("@HOMEPAGE@", "https://example.com/k3sdoctor")
        .replace("@URI@", "https://example.com/k3sdoctor.tar.gz")
        .replace("@SHA256@", &"0123456789abcdef".repeat(4));
    let broken = [
        ("version without its v", good.replace("version: v1.2.3", "version: 1.2.3")),
        ("apiVersion", good.replace("v1alpha2", "v1alpha1")),
        ("kind", good.replace("kind: Plugin", "kind: Plugins")),
        ("uppercase sha256", good.replace("0123456789abcdef", "0123456789ABCDEF")),
        ("selector key", good.replace("os: linux", "distro: linux")),
        ("unknown field", good.replace("  caveats: |", "  caveat: |")),
        ("bin outside", good.replace("bin: k3sdoctor", "bin: ../k3sdoctor")),
        ("name", good.replace("name: k3s-doctor", "name: k3s doctor")),
        (
            "two-line short description",
            good.replace(
                "shortDescription: Find and safely repair k3s/RKE2 leader-lock splits and snapshot drift",
                "shortDescription: \"Find and\\nsafely repair\"",
            ),
        ),
    ];
    for (what, manifest) in broken {
        assert_ne!(manifest, good, "{what}: the replacement changed nothing");
        assert!(
            !krew_schema_errors(&yaml(&manifest)).is_empty(),
            "{what}: accepted"
        );
    }
}
