//! `deploy/image/oci_archive.py`, the OCI image writer of `deploy/image/build.sh`, on a stand-in
//! binary: the layout a runtime reads (oci-layout, index.json, blobs addressed by their
//! sha256), the name deploy/ runs, a non-root user, the labels, and the same bytes from the same
//! inputs. (CI's `.ci/check-image` checks the real build: static binary, chroot, skopeo.)

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::harness::repo_path;

/// Runs the writer; `None` when python3 is not installed.
fn write_archive(binary: &Path, created: u64, output: &Path) -> Option<()> {
    let out = Command::new("python3")
        .arg(repo_path("deploy/image/oci_archive.py"))
        .args(["--binary", binary.to_str().unwrap()])
        .args(["--name", "localhost/k3sdoctor"])
        .args(["--version", env!("CARGO_PKG_VERSION")])
        .args(["--created", &created.to_string()])
        .args(["--source", "https://example.com/k3sdoctor.git"])
        .args(["--revision", "0123456789abcdef"])
        .args(["--output", output.to_str().unwrap()])
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "oci_archive.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(())
}

/// The archive's entries by path, with their modes, owners and times.
struct Entry {
    data: Vec<u8>,
    mode: u32,
    owner: (u64, u64),
    mtime: u64,
}

fn tar_entries(bytes: &[u8]) -> Vec<(String, Entry)> {
    // ustar: 512-byte headers, octal fields; enough to read what the writer wrote.
    let octal = |field: &[u8]| -> u64 {
        let text = std::str::from_utf8(field).unwrap();
        let text = text.trim_matches(|c| c == '\0' || c == ' ');
        if text.is_empty() {
            0
        } else {
            u64::from_str_radix(text, 8).unwrap()
        }
    };
    let mut entries = Vec::new();
    let mut at = 0;
    while at + 512 <= bytes.len() && bytes[at..at + 512].iter().any(|b| *b != 0) {
        let header = &bytes[at..at + 512];
        let cstr =
            |f: &[u8]| String::from_utf8(f.split(|b| *b == 0).next().unwrap().to_vec()).unwrap();
        let (prefix, name) = (cstr(&header[345..500]), cstr(&header[0..100]));
        let path = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let size = octal(&header[124..136]) as usize;
        let data = bytes[at + 512..at + 512 + size].to_vec();
        entries.push((
            path,
            Entry {
                data,
                mode: octal(&header[100..108]) as u32,
                owner: (octal(&header[108..116]), octal(&header[116..124])),
                mtime: octal(&header[136..148]),
            },
        ));
        at += 512 + size.div_ceil(512) * 512;
    }
    entries
}

fn sha256(data: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(data))
}

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .args(["-dc"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("gzip");
    let mut stdin = child.stdin.take().unwrap();
    let owned = data.to_vec();
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &owned));
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    writer.join().unwrap().unwrap();
    assert!(child.wait().unwrap().success());
    out
}

#[test]
fn the_image_archive_is_an_oci_layout_named_as_deploy_runs_it_and_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("k3sdoctor");
    std::fs::write(&binary, b"\x7fELF stand-in for the static binary").unwrap();
    let (first, second) = (dir.path().join("a.tar"), dir.path().join("b.tar"));
    let Some(()) = write_archive(&binary, 1_700_000_000, &first) else {
        println!("skipped: python3 is not installed");
        return;
    };
    write_archive(&binary, 1_700_000_000, &second).unwrap();
    let bytes = std::fs::read(&first).unwrap();
    assert_eq!(
        bytes,
        std::fs::read(&second).unwrap(),
        "same inputs, other bytes"
    );

    let entries = tar_entries(&bytes);
    let paths: Vec<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "entries are sorted");
    for (path, entry) in &entries {
        assert_eq!(entry.owner, (0, 0), "{path}");
        assert_eq!(entry.mtime, 1_700_000_000, "{path}");
    }
    let files: BTreeMap<&str, &Entry> = entries.iter().map(|(p, e)| (p.as_str(), e)).collect();
    let json = |path: &str| -> Value { serde_json::from_slice(&files[path].data).unwrap() };
    assert_eq!(json("oci-layout")["imageLayoutVersion"], "1.0.0");
    let blob = |digest: &Value| -> &[u8] {
        let digest = digest.as_str().unwrap();
        let data = &files[format!("blobs/sha256/{}", &digest[7..]).as_str()].data;
        assert_eq!(sha256(data), digest, "a blob is named by its digest");
        data
    };

    let index = json("index.json");
    let manifests = index["manifests"].as_array().unwrap();
    assert_eq!(manifests.len(), 1);
    let reference = format!("localhost/k3sdoctor:{}", env!("CARGO_PKG_VERSION"));
    let annotations = &manifests[0]["annotations"];
    assert_eq!(annotations["org.opencontainers.image.ref.name"], reference);
    assert_eq!(annotations["io.containerd.image.name"], reference);
    assert_eq!(manifests[0]["platform"]["architecture"], "amd64");

    let manifest: Value = serde_json::from_slice(blob(&manifests[0]["digest"])).unwrap();
    let config: Value = serde_json::from_slice(blob(&manifest["config"]["digest"])).unwrap();
    assert_eq!(config["config"]["User"], "65532:65532");
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["/usr/local/bin/k3sdoctor"])
    );
    let labels = &config["config"]["Labels"];
    assert_eq!(labels["org.opencontainers.image.title"], "k3sdoctor");
    assert_eq!(
        labels["org.opencontainers.image.version"],
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(labels["org.opencontainers.image.licenses"], "Apache-2.0");
    assert_eq!(
        labels["org.opencontainers.image.source"],
        "https://example.com/k3sdoctor.git"
    );

    // One layer: the binary at the entrypoint, executable, owned by root; its diff_id is the
    // digest of the uncompressed tar.
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    let layer = gunzip(blob(&layers[0]["digest"]));
    assert_eq!(config["rootfs"]["diff_ids"][0], sha256(&layer));
    let layer_entries = tar_entries(&layer);
    let (_, bin) = layer_entries
        .iter()
        .find(|(p, _)| p == "usr/local/bin/k3sdoctor")
        .expect("the binary in the layer");
    assert_eq!(bin.data, std::fs::read(&binary).unwrap());
    assert_eq!((bin.mode, bin.owner), (0o755, (0, 0)));

    // Another binary is another image: the digest follows the content.
    std::fs::write(&binary, b"\x7fELF another build").unwrap();
    let third = dir.path().join("c.tar");
    write_archive(&binary, 1_700_000_000, &third).unwrap();
    let index3: Value = serde_json::from_slice(
        &tar_entries(&std::fs::read(&third).unwrap())
            .into_iter()
            .find(|(p, _)| p == "index.json")
            .unwrap()
            .1
            .data,
    )
    .unwrap();
    assert_ne!(index3["manifests"][0]["digest"], manifests[0]["digest"]);
}
