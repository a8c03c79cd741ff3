//! The committed completions and man pages must match what the CLI generates now.
//! Regenerate with: K3SDOCTOR_UPDATE_GENERATED=1 cargo test --test cli generated

use std::path::Path;

use crate::support::harness::{k3sdoctor, repo_path};

const SHELLS: [(&str, &str); 5] = [
    ("bash", "k3sdoctor.bash"),
    ("zsh", "_k3sdoctor"),
    ("fish", "k3sdoctor.fish"),
    ("powershell", "_k3sdoctor.ps1"),
    ("elvish", "k3sdoctor.elv"),
];

fn check(path: &Path, fresh: &[u8], stale: &mut Vec<String>) {
    if std::env::var_os("K3SDOCTOR_UPDATE_GENERATED").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, fresh).unwrap();
    } else if std::fs::read(path).ok().as_deref() != Some(fresh) {
        stale.push(path.display().to_string());
    }
}

#[test]
fn generated_completions_and_man_pages_are_current() {
    let mut stale = Vec::new();
    for (shell, file) in SHELLS {
        let out = k3sdoctor(["completions", shell]).run();
        out.code(0);
        check(
            &repo_path("completions").join(file),
            out.stdout.as_bytes(),
            &mut stale,
        );
    }
    let dir = tempfile::tempdir().unwrap();
    k3sdoctor(["man", "--out-dir"])
        .arg(dir.path().display().to_string())
        .run()
        .code(0);
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    for name in &names {
        let fresh = std::fs::read(dir.path().join(name)).unwrap();
        check(&repo_path("man").join(name), &fresh, &mut stale);
    }
    let committed = std::fs::read_dir(repo_path("man"))
        .map(|d| d.count())
        .unwrap_or(0);
    if std::env::var_os("K3SDOCTOR_UPDATE_GENERATED").is_none() && committed != names.len() {
        stale.push(format!(
            "man/ holds {committed} pages, the CLI generates {}",
            names.len()
        ));
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}; regenerate with K3SDOCTOR_UPDATE_GENERATED=1 cargo test --test cli generated"
    );
}

/// `schema/<kind>.json`, generated from the report types.
#[test]
fn committed_schemas_are_current() {
    let mut stale = Vec::new();
    let schemas = k3sdoctor::schema::all();
    for (kind, schema) in &schemas {
        let text = serde_json::to_string_pretty(schema).unwrap() + "\n";
        check(
            &repo_path("schema").join(format!("{kind}.json")),
            text.as_bytes(),
            &mut stale,
        );
    }
    let committed = std::fs::read_dir(repo_path("schema"))
        .map(|d| d.count())
        .unwrap_or(0);
    if committed != schemas.len() {
        stale.push(format!(
            "schema/ holds {committed} files, the types give {}",
            schemas.len()
        ));
    }
    assert!(
        stale.is_empty(),
        "stale schemas: {stale:?}; regenerate with K3SDOCTOR_UPDATE_GENERATED=1 cargo test --test cli generated"
    );
}

#[test]
fn man_page_documents_the_exit_codes() {
    let out = k3sdoctor(["man"]).run();
    out.code(0)
        .stdout_has(".SH \"EXIT STATUS\"")
        .stdout_has("could not read the cluster");
}
