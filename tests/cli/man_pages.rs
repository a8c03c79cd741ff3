//! The man pages read as man-pages(7) asks, and man-db renders them without a warning.

use std::process::Command;

use crate::support::harness::k3sdoctor;

/// Sections every page has, in man-pages(7)'s order.
const SECTIONS: [&str; 7] = [
    ".SH NAME",
    ".SH SYNOPSIS",
    ".SH DESCRIPTION",
    ".SH OPTIONS",
    ".SH \"EXIT STATUS\"",
    ".SH EXAMPLES",
    ".SH \"SEE ALSO\"",
];

fn pages() -> (tempfile::TempDir, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    k3sdoctor(["man", "--out-dir"])
        .arg(dir.path().display().to_string())
        .run()
        .code(0);
    let mut pages: Vec<(String, String)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    pages.sort();
    (dir, pages)
}

#[test]
fn every_page_has_the_man_pages_7_sections_and_names_only_shipped_pages() {
    let (_dir, pages) = pages();
    let shipped: Vec<String> = pages
        .iter()
        .map(|(name, _)| name.trim_end_matches(".1").replace('-', "\\-"))
        .collect();
    for (name, page) in &pages {
        let mut last = 0;
        for section in SECTIONS {
            let at = page
                .find(&format!("\n{section}\n"))
                .unwrap_or_else(|| panic!("{name} lacks {section}"));
            assert!(at > last, "{name}: {section} out of order");
            last = at;
        }
        let see_also = page.split(".SH \"SEE ALSO\"\n").nth(1).unwrap();
        for reference in see_also.lines().filter_map(|l| l.strip_prefix(".BR ")) {
            let page_name = reference.split(' ').next().unwrap();
            assert!(
                shipped.iter().any(|s| s == page_name) || ["kubectl", "k3s"].contains(&page_name),
                "{name} refers to {page_name}(1), which is not shipped"
            );
        }
        for reference in page.split("\\fB").skip(1) {
            if let Some((page_name, _)) = reference.split_once("\\fR(1)") {
                assert!(
                    shipped.iter().any(|s| s == page_name),
                    "{name} refers to {page_name}(1), which is not shipped"
                );
            }
        }
        assert!(!page.contains("help(1)"), "{name}");
    }
    let follow = &pages
        .iter()
        .find(|(n, _)| n == "k3sdoctor-leases-follow.1")
        .unwrap()
        .1;
    let synopsis = follow.split(".SH SYNOPSIS\n").nth(1).unwrap();
    assert!(
        synopsis.contains("\\fB\\-\\-to\\fR \\fINODE|HOSTNAME\\fR"),
        "{synopsis}"
    );
    assert!(
        synopsis.contains("\\fB\\-\\-kubeconfig\\fR \\fIFILE\\fR"),
        "{synopsis}"
    );
    let main = &pages.iter().find(|(n, _)| n == "k3sdoctor.1").unwrap().1;
    for env in ["KUBECONFIG", "NO_COLOR"] {
        assert!(main.contains(&format!(".B {env}\n")), "{env}");
    }
    assert!(main.contains(".SH FILES\n") && main.contains(".SH ENVIRONMENT\n"));
}

#[test]
fn man_db_renders_every_page_without_warnings() {
    if Command::new("man").arg("--version").output().is_err() {
        println!("skipped: man (Debian's man-db) is not installed");
        return;
    }
    let (dir, pages) = pages();
    for (name, _) in &pages {
        let out = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(dir.path().join(name))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "man -l {name}: {stderr}");
        assert!(
            stderr.trim().is_empty(),
            "man --warnings -l {name}:\n{stderr}"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("EXIT STATUS"), "{name}:\n{text}");
    }
}
