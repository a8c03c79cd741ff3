//! "Later builds take seconds" (README) holds only if build.rs watches files that exist:
//! cargo reruns a build script on every build while a path it watches is missing, and the
//! crate is then compiled again. The build script's last output, beside the binary under test,
//! lists what it watches.

use std::path::{Path, PathBuf};

use crate::support::harness::repo_path;

/// The `output` of the newest run of k3sdoctor's build script for the binary under test.
fn newest_build_output() -> String {
    let profile_dir = Path::new(env!("CARGO_BIN_EXE_k3sdoctor"))
        .parent()
        .unwrap()
        .to_path_buf();
    let mut outputs: Vec<(std::time::SystemTime, PathBuf)> =
        std::fs::read_dir(profile_dir.join("build"))
            .unwrap()
            .flatten()
            .map(|e| e.path().join("output"))
            .filter(|p| {
                std::fs::read_to_string(p).is_ok_and(|s| s.contains("K3SDOCTOR_GIT_COMMIT"))
            })
            .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
            .collect();
    outputs.sort();
    let (_, newest) = outputs.pop().expect("k3sdoctor's build script ran");
    std::fs::read_to_string(newest).unwrap()
}

#[test]
fn the_build_script_watches_only_files_that_exist() {
    let output = newest_build_output();
    let watched: Vec<&str> = output
        .lines()
        .filter_map(|l| l.strip_prefix("cargo:rerun-if-changed="))
        .collect();
    assert!(watched.contains(&"build.rs"), "{output}");
    for path in watched {
        let full = if Path::new(path).is_absolute() {
            PathBuf::from(path)
        } else {
            repo_path(path)
        };
        assert!(
            full.exists(),
            "build.rs watches {path}, which does not exist: every build reruns it"
        );
    }
}

/// The newest compiled build script of k3sdoctor beside the binary under test.
fn newest_build_script() -> PathBuf {
    let profile_dir = Path::new(env!("CARGO_BIN_EXE_k3sdoctor")).parent().unwrap();
    let mut scripts: Vec<(std::time::SystemTime, PathBuf)> =
        std::fs::read_dir(profile_dir.join("build"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("k3sdoctor-"))
            .map(|e| e.path().join("build-script-build"))
            .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
            .collect();
    scripts.sort();
    scripts
        .pop()
        .expect("k3sdoctor's build script was compiled")
        .1
}

/// On a fresh clone `git status` rewrites the index (it refreshes the files' stat data), and
/// the index is a file the build script watches: a script that ran it plainly made its own
/// output stale, and the first two builds of every clone each compiled the crate (CI's second
/// `cargo test` took 24 s more).
#[test]
fn the_build_script_leaves_the_git_index_of_a_fresh_clone_alone() {
    let work = tempfile::tempdir().unwrap();
    let clone = work.path().join("clone");
    let cloned = std::process::Command::new("git")
        .args(["clone", "--quiet"])
        .arg(repo_path(""))
        .arg(&clone)
        .status();
    if !cloned.is_ok_and(|s| s.success()) {
        eprintln!("skipped: this checkout cannot be cloned with git");
        return;
    }
    let index = clone.join(".git/index");
    let before = index.metadata().unwrap().modified().unwrap();
    let out_dir = work.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let ran = std::process::Command::new(newest_build_script())
        .env("CARGO_MANIFEST_DIR", &clone)
        .env("OUT_DIR", &out_dir)
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    assert!(
        String::from_utf8_lossy(&ran.stdout).contains("K3SDOCTOR_GIT_TREE_STATE=clean"),
        "the build script did not read the clone: {}",
        String::from_utf8_lossy(&ran.stdout)
    );
    let after = index.metadata().unwrap().modified().unwrap();
    assert_eq!(
        before,
        after,
        "the build script rewrote {}",
        index.display()
    );
}
