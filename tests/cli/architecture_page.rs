//! docs/development.md is the architecture page: it names every folder of `src/`.
//! A folder beside a file of the same name (`credential_plugin.rs` and `credential_plugin/`)
//! holds that module's children, usually its `tests.rs`, and is named through the file.

use std::path::Path;

use crate::support::harness::{repo_path, rust_files};

fn folders(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let beside_a_file = path.with_extension("rs").is_file();
        if !beside_a_file {
            let rel = path.strip_prefix(repo_path("src")).unwrap();
            out.push(rel.to_string_lossy().into_owned());
        }
        folders(&path, out);
    }
}

#[test]
fn the_architecture_page_names_every_folder_of_src() {
    let page = std::fs::read_to_string(repo_path("docs/development.md")).unwrap();
    let mut all = Vec::new();
    folders(&repo_path("src"), &mut all);
    assert!(all.len() > 5, "{all:?}");
    let unnamed: Vec<&String> = all
        .iter()
        .filter(|folder| {
            // Named in the tree as its last component under its parent (`input/` then
            // `  live/`), so every component of the path must appear with its slash.
            !folder
                .split('/')
                .all(|part| page.contains(&format!("{part}/")))
        })
        .collect();
    assert!(
        unnamed.is_empty(),
        "docs/development.md does not name these folders of src/: {unnamed:?}"
    );
}

#[test]
fn the_architecture_page_names_no_file_or_folder_that_is_gone() {
    let page = std::fs::read_to_string(repo_path("docs/development.md")).unwrap();
    let tree = page
        .split("```")
        .find(|block| block.trim_start().starts_with("src/"))
        .expect("a ```src/ ...``` tree on the page");
    let mut gone = Vec::new();
    for token in tree.split_whitespace() {
        let name = token.trim_matches(|c: char| "(),:;`".contains(c));
        let is_name = name.ends_with(".rs") || name.ends_with('/');
        let plain = name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_./".contains(c));
        let held = repo_path(name).exists() || find(&repo_path("src"), name.trim_end_matches('/'));
        if is_name && plain && !held {
            gone.push(name.to_string());
        }
    }
    assert!(
        gone.is_empty(),
        "docs/development.md names what src/ does not hold: {gone:?}"
    );
}

/// Whether `name` (`live`, `load.rs`, `version/`'s `version`) is a file or folder under `dir`.
fn find(dir: &Path, name: &str) -> bool {
    let last = name.rsplit('/').next().unwrap_or(name);
    std::fs::read_dir(dir).unwrap().any(|entry| {
        let path = entry.unwrap().path();
        path.file_name().is_some_and(|n| n == last) || (path.is_dir() && find(&path, name))
    })
}

/// No function in src/ runs over 100 lines, counted from the line with `fn` to the closing
/// brace at the same indentation: a long function hides its reasons.
#[test]
fn no_function_in_src_runs_over_100_lines() {
    let mut long = Vec::new();
    let files = rust_files(&repo_path("src"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (start, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            let is_fn = [
                "fn ",
                "pub fn ",
                "async fn ",
                "pub async fn ",
                "pub(crate) fn ",
                "pub(super) fn ",
            ]
            .iter()
            .any(|p| code.starts_with(p))
                || code.starts_with("pub(super) async fn ")
                || code.starts_with("pub(crate) async fn ");
            if !is_fn || code.ends_with(';') {
                continue;
            }
            let indent = &line[..line.len() - code.len()];
            let end = lines[start..]
                .iter()
                .position(|l| *l == format!("{indent}}}"))
                .map_or(0, |n| n + 1);
            if end > 100 {
                long.push(format!("{}:{} ({end} lines)", file.display(), start + 1));
            }
        }
    }
    assert!(long.is_empty(), "functions over 100 lines: {long:#?}");
}
