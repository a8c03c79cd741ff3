//! Every relative link in README.md and docs/*.md reaches a file of this repository, and every
//! `#anchor` a heading of its page, with GitHub's anchor rules: so a renamed heading, a moved
//! section or a misspelt folder (`schemas/` for `schema/`) fails here, not in a reader's browser.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::harness::repo_path;

/// README.md and every page of docs/, relative to the repository.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo_path("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| Path::new("docs").join(p.file_name().unwrap()))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The lines of a page outside fenced code blocks, with inline code spans removed: a path in a
/// shell example is not a link.
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut fence: Option<String> = None;
    let mut lines = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker: String = trimmed
            .chars()
            .take_while(|c| *c == '`' || *c == '~')
            .collect();
        if marker.len() >= 3 && marker.chars().all(|c| c == marker.chars().next().unwrap()) {
            match &fence {
                None => fence = Some(marker),
                Some(open) if marker.starts_with(open.as_str()) && trimmed == marker => {
                    fence = None
                }
                Some(_) => {}
            }
            continue;
        }
        if fence.is_none() {
            lines.push((at + 1, without_code_spans(line)));
        }
    }
    lines
}

fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for part in line.split('`') {
        if !in_code {
            out.push_str(part);
        }
        in_code = !in_code;
    }
    out
}

/// The text of a heading as GitHub renders it: links become their text, code loses its
/// backticks.
fn heading_text(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    text.replace('`', "")
}

/// GitHub's anchor of a heading: lowercase, punctuation dropped (letters, digits, `-` and `_`
/// stay), each space a dash.
fn slug(heading: &str) -> String {
    heading_text(heading)
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page: one per ATX heading, `-1`, `-2`, ... after a repeated one, as GitHub
/// numbers them; and explicit `<a id=...>` / `<a name=...>` targets.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    let mut fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        for attr in ["<a id=\"", "<a name=\""] {
            for (at, _) in line.match_indices(attr) {
                let value = &line[at + attr.len()..];
                if let Some(end) = value.find('"') {
                    anchors.insert(value[..end].to_string());
                }
            }
        }
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !trimmed[hashes..].starts_with(' ') {
            continue;
        }
        let heading = trimmed[hashes..].trim().trim_end_matches('#').trim_end();
        let base = slug(heading);
        let count = seen.entry(base.clone()).or_insert(0);
        anchors.insert(if *count == 0 {
            base.clone()
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    anchors
}

/// The targets of inline links (`[text](target)`, `![alt](target)`) and of reference
/// definitions (`[label]: target`) on one line of prose.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for (at, _) in line.match_indices("](") {
        let rest = &line[at + 2..];
        let end = rest
            .find(|c: char| c == ')' || c.is_whitespace())
            .unwrap_or(rest.len());
        targets.push(rest[..end].trim_matches(['<', '>']).to_string());
    }
    let trimmed = line.trim_start();
    if trimmed.starts_with('[')
        && let Some(close) = trimmed.find("]: ")
    {
        let target = trimmed[close + 3..].split_whitespace().next().unwrap_or("");
        targets.push(target.to_string());
    }
    targets
}

/// Whether a target leaves the repository (a URL, `mailto:`), which this test does not follow.
fn is_external(target: &str) -> bool {
    let before_path = target.split(['/', '#']).next().unwrap_or("");
    before_path.contains(':')
}

/// The broken links of every page, one line each.
fn broken_links() -> Vec<String> {
    let mut broken = Vec::new();
    let mut anchors_of: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    for page in pages() {
        let text = std::fs::read_to_string(repo_path(page.to_str().unwrap())).unwrap();
        for (line_no, line) in prose_lines(&text) {
            for target in link_targets(&line) {
                if target.is_empty() || is_external(&target) {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    normalise(&page.parent().unwrap().join(path))
                };
                let where_ = format!("{}:{line_no}: {target}", page.display());
                if file.starts_with("..") {
                    broken.push(format!("{where_}: leaves the repository"));
                    continue;
                }
                let on_disk = repo_path(file.to_str().unwrap());
                if !on_disk.exists() {
                    broken.push(format!("{where_}: {} does not exist", file.display()));
                    continue;
                }
                if anchor.is_empty() {
                    continue;
                }
                if file.extension().is_none_or(|e| e != "md") {
                    broken.push(format!(
                        "{where_}: an anchor into {}, which has no headings",
                        file.display()
                    ));
                    continue;
                }
                let anchors = anchors_of.entry(file.clone()).or_insert_with(|| {
                    anchors(&std::fs::read_to_string(&on_disk).unwrap_or_default())
                });
                if !anchors.contains(anchor) {
                    broken.push(format!(
                        "{where_}: {} has no heading #{anchor}",
                        file.display()
                    ));
                }
            }
        }
    }
    broken
}

/// `docs/../schema/` -> `schema/`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    let mut above = 0;
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if parts.pop().is_none() {
                    above += 1;
                }
            }
            other => parts.push(other.as_os_str()),
        }
    }
    let mut out = PathBuf::new();
    for _ in 0..above {
        out.push("..");
    }
    for part in parts {
        out.push(part);
    }
    out
}

#[test]
fn every_relative_link_and_anchor_in_readme_and_docs_resolves() {
    let broken = broken_links();
    assert!(
        broken.is_empty(),
        "{} broken link(s):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn anchors_follow_githubs_rules() {
    let page = "\
# Usage
## Monitoring: `check` in scripts, `serve` for Prometheus
## Snapshots: `snapshots list`, `diff`
## Repeated
```sh
## not a heading
```
## Repeated
## Repeated ##
## [Linked](other.md) title
## Support matrix (1.23–1.36) & RKE2
<a id=\"custom-target\"></a>
#not-a-heading
";
    let got = anchors(page);
    let want: BTreeSet<String> = [
        "usage",
        "monitoring-check-in-scripts-serve-for-prometheus",
        "snapshots-snapshots-list-diff",
        "repeated",
        "repeated-1",
        "repeated-2",
        "linked-title",
        "support-matrix-123136--rke2",
        "custom-target",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(got, want);
}

#[test]
fn links_in_code_are_not_links_and_urls_are_not_followed() {
    let lines = prose_lines(
        "see [a](a.md) and `[b](b.md)`\n```md\n[c](c.md)\n```\n[d]: d.md\n[e](https://x/y.md)\n",
    );
    let targets: Vec<String> = lines.iter().flat_map(|(_, l)| link_targets(l)).collect();
    assert_eq!(targets, ["a.md", "d.md", "https://x/y.md"]);
    assert!(is_external("https://x/y.md"));
    assert!(is_external("mailto:a@b"));
    assert!(!is_external("docs/x.md#a:b"));
    assert_eq!(
        normalise(Path::new("docs/../schema/")),
        PathBuf::from("schema")
    );
    assert_eq!(normalise(Path::new("docs/../../x")), PathBuf::from("../x"));
}
