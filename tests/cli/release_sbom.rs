//! `deploy/image/sbom.py`, which makes cargo cyclonedx's SBOM reproducible in
//! deploy/image/build.sh, on a document shaped like the plugin's: the clone's path, the random
//! serial number and the current time are gone, the commit is recorded, the same content gives
//! the same bytes, and an SBOM of something else is refused. (CI's `.ci/check-image` checks the
//! real SBOM against the binary's `.dep-v0` section and Cargo.lock.)

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::support::harness::repo_path;

/// What cargo cyclonedx writes, in the fields sbom.py touches.
fn plugin_output(clone: &Path, serial: &str, time: &str, name: &str) -> Value {
    let root = format!("path+file://{}#{name}@0.1.0", clone.display());
    json!({
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "version": 1,
        "serialNumber": serial,
        "metadata": {
            "timestamp": time,
            "component": {"type": "application", "bom-ref": root, "name": name, "version": "0.1.0"},
            "properties": [{"name": "cdx:rustc:sbom:target:triple", "value": "x86_64-unknown-linux-gnu"}],
        },
        "components": [{"type": "library", "name": "kube-client", "version": "5.0.0",
                        "purl": "pkg:cargo/kube-client@5.0.0"}],
        "dependencies": [{"ref": root, "dependsOn": []}],
    })
}

/// Runs sbom.py on `bom`; `None` when python3 is not installed.
fn reproducible(dir: &Path, bom: &Value, output: &str) -> Option<(std::process::Output, String)> {
    let clone = dir.join("clone");
    std::fs::create_dir_all(&clone).unwrap();
    let input = clone.join("k3sdoctor-sbom-1.json");
    std::fs::write(&input, serde_json::to_vec(bom).unwrap()).unwrap();
    let output = dir.join(output);
    let out = Command::new("python3")
        .arg(repo_path("deploy/image/sbom.py"))
        .args(["--input", input.to_str().unwrap()])
        .args(["--repo", clone.to_str().unwrap()])
        .args(["--created", "1717157440"])
        .args(["--version", "0.1.0"])
        .args(["--revision", "0123456789abcdef"])
        .args(["--output", output.to_str().unwrap()])
        .output()
        .ok()?;
    assert!(
        !input.exists(),
        "the plugin's file is left inside the clone"
    );
    Some((out, std::fs::read_to_string(&output).unwrap_or_default()))
}

#[test]
fn the_sbom_is_made_reproducible_and_names_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let clone = std::fs::canonicalize(dir.path()).unwrap().join("clone");
    let first = plugin_output(
        &clone,
        "urn:uuid:5a0e0b1c-0000-4000-8000-000000000001",
        "2026-12-02T04:43:24.564107663Z",
        "k3sdoctor",
    );
    let Some((out, text)) = reproducible(dir.path(), &first, "first.cdx.json") else {
        eprintln!("skipped: python3 is not installed");
        return;
    };
    assert!(
        out.status.success(),
        "sbom.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains(clone.to_str().unwrap()), "{text}");
    let bom: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(bom["metadata"]["timestamp"], "2024-05-31T12:10:40Z");
    assert_eq!(
        bom["metadata"]["component"]["bom-ref"],
        "path+file://.#k3sdoctor@0.1.0"
    );
    assert!(
        bom["metadata"]["properties"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "k3sdoctor:revision", "value": "0123456789abcdef"}))
    );
    let serial = bom["serialNumber"].as_str().unwrap();
    assert!(serial.starts_with("urn:uuid:"), "{serial}");
    assert_ne!(serial, first["serialNumber"]);

    // Another run of the plugin (another serial, another time) gives the same bytes.
    let again = plugin_output(
        &clone,
        "urn:uuid:5a0e0b1c-0000-4000-8000-000000000002",
        "2026-12-03T01:02:03.4Z",
        "k3sdoctor",
    );
    let (out, text_again) = reproducible(dir.path(), &again, "again.cdx.json").unwrap();
    assert!(out.status.success());
    assert_eq!(text_again, text);

    // An SBOM of another crate is refused, with one line.
    let other = plugin_output(&clone, "urn:uuid:x", "2026-12-02T00:00:00Z", "other");
    let (out, _) = reproducible(dir.path(), &other, "other.cdx.json").unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("describes other 0.1.0, not k3sdoctor 0.1.0"),
        "{stderr}"
    );
}
