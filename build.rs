//! Build facts for `k3sdoctor version` (issue 29, item 14): the git commit and whether the
//! tree was dirty, the build date, rustc, the target and the enabled features.
//!
//! Nothing here touches the network, and nothing is needed at run time: the facts become
//! compile-time environment variables. Without git (a source tarball, a tree that is not a
//! checkout) they read `unknown`. The build stays reproducible (deploy/image/build.sh checks a
//! byte-identical second build): the date is SOURCE_DATE_EPOCH, else the commit's time, never
//! the clock.

use std::path::Path;
use std::process::Command;

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let git = Git::of(Path::new(&manifest_dir));

    let commit = git.as_ref().and_then(|g| g.run(&["rev-parse", "HEAD"]));
    let tree_state = match (&git, &commit) {
        (Some(g), Some(_)) => {
            match g.run_status(&["status", "--porcelain", "--untracked-files=no"]) {
                Some(changes) if changes.is_empty() => "clean",
                Some(_) => "dirty",
                None => "unknown",
            }
        }
        _ => "unknown",
    };
    // SOURCE_DATE_EPOCH first (reproducible-builds.org), then the commit's own time.
    let (date, date_source) = match std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .filter(|v| v.trim().parse::<i64>().is_ok())
    {
        Some(epoch) => (epoch.trim().to_string(), "SOURCE_DATE_EPOCH"),
        None => match git
            .as_ref()
            .and_then(|g| g.run(&["log", "-1", "--format=%ct"]))
        {
            Some(epoch) => (epoch, "commit time"),
            None => (String::new(), "unknown"),
        },
    };
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| {
            k.strip_prefix("CARGO_FEATURE_")
                .map(|f| f.to_lowercase().replace('_', "-"))
        })
        .collect();
    features.sort();

    let set = |key: &str, value: &str| println!("cargo:rustc-env={key}={value}");
    set(
        "K3SDOCTOR_GIT_COMMIT",
        commit.as_deref().unwrap_or("unknown"),
    );
    set("K3SDOCTOR_GIT_TREE_STATE", tree_state);
    set("K3SDOCTOR_BUILD_EPOCH", &date);
    set("K3SDOCTOR_BUILD_DATE_SOURCE", date_source);
    set("K3SDOCTOR_RUSTC_VERSION", &rustc_version);
    set(
        "K3SDOCTOR_TARGET",
        &std::env::var("TARGET").unwrap_or_else(|_| "unknown".into()),
    );
    set("K3SDOCTOR_FEATURES", &features.join(","));

    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-changed=build.rs");
    // What makes the tree dirty and what the binary is built from.
    for path in ["src", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={path}");
    }
    if let Some(g) = &git {
        for path in g.watched() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// The git checkout whose top is this crate's folder (never an enclosing repository that
/// merely contains an unpacked tarball).
struct Git {
    dir: std::path::PathBuf,
}

impl Git {
    fn of(manifest_dir: &Path) -> Option<Git> {
        let git = Git {
            dir: manifest_dir.to_path_buf(),
        };
        let top = git.run(&["rev-parse", "--show-toplevel"])?;
        let same = std::fs::canonicalize(&top).ok()? == std::fs::canonicalize(manifest_dir).ok()?;
        same.then_some(git)
    }

    fn run(&self, args: &[&str]) -> Option<String> {
        self.run_status(args).filter(|s| !s.is_empty())
    }

    /// The command's trimmed stdout, empty included; `None` when git is missing or fails.
    fn run_status(&self, args: &[&str]) -> Option<String> {
        // Without optional locks `git status` does not refresh the index: on a fresh clone it
        // would rewrite it, a file this script watches, and so make its own output stale and
        // the next build compile the crate again.
        let out = Command::new("git")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .arg("-C")
            .arg(&self.dir)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The files that change when HEAD moves or files are staged: this worktree's HEAD and
    /// index, and the branch ref (loose or packed) in the common folder. Only those that exist:
    /// cargo reruns a build script on every build while a path it watches is missing, and a
    /// fresh clone often has no packed-refs (or its branch only packed, with no loose ref). A
    /// ref that appears later comes with a change to one that exists (packing deletes the loose
    /// ref; a commit rewrites it or packed-refs).
    fn watched(&self) -> Vec<String> {
        let mut paths = Vec::new();
        let path_of = |name: &str| self.run(&["rev-parse", "--git-path", name]);
        for name in ["HEAD", "index", "packed-refs"] {
            if let Some(p) = path_of(name) {
                paths.push(self.absolute(&p));
            }
        }
        if let Some(reference) = self.run(&["symbolic-ref", "-q", "HEAD"])
            && let Some(p) = path_of(&reference)
        {
            paths.push(self.absolute(&p));
        }
        paths.retain(|p| Path::new(p).exists());
        paths
    }

    fn absolute(&self, p: &str) -> String {
        let path = Path::new(p);
        if path.is_absolute() {
            p.to_string()
        } else {
            self.dir.join(path).display().to_string()
        }
    }
}
