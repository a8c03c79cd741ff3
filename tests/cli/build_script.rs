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
