//! `k3sdoctor man`: the man pages, generated from the same clap definitions as `--help`.

use std::io::Write;
use std::path::Path;

use crate::cli::{EXIT_CODE_NOTES, EXIT_CODES};
use crate::diagnose::finding::FindingCode;
use crate::render::man_page::{PageText, write_page};

/// The top page and one page per subcommand, as (file name, contents).
pub(crate) fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let top = crate::cli::command();
    let mut commands = vec![(vec!["k3sdoctor".to_string()], top.clone())];
    collect(&top, &["k3sdoctor".to_string()], &mut commands);
    let names: Vec<String> = commands.iter().map(|(path, _)| path.join("-")).collect();
    let finding_codes = finding_codes_section();
    let mut pages = Vec::new();
    for ((path, cmd), name) in commands.iter().zip(&names) {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = PageText {
            name,
            path: &words,
            exit_codes: &EXIT_CODES,
            exit_notes: &EXIT_CODE_NOTES,
            related: &names,
            extra_roff: if path.len() == 1 { &finding_codes } else { "" },
            reads_cluster: !matches!(
                words.get(1),
                Some(&"completions" | &"man" | &"options" | &"version")
            ),
        };
        let mut buf = Vec::new();
        write_page(&mut buf, cmd, &text)?;
        pages.push((format!("{name}.1"), buf));
    }
    Ok(pages)
}

/// Every command below `cmd` with the words that run it; clap's `help` subcommand only
/// repeats `--help` and gets no page.
fn collect(cmd: &clap::Command, path: &[String], into: &mut Vec<(Vec<String>, clap::Command)>) {
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let mut sub_path = path.to_vec();
        sub_path.push(sub.get_name().to_string());
        into.push((sub_path.clone(), sub.clone()));
        collect(sub, &sub_path, into);
    }
}

/// The stable finding codes, as a roff section appended to the main page.
fn finding_codes_section() -> String {
    let escape = |s: &str| s.replace('\\', "\\\\").replace('-', "\\-");
    let mut roff = String::from(".SH \"FINDING CODES\"\n");
    for code in FindingCode::ALL {
        let (severity, meaning, remediation) = code.describe();
        roff.push_str(&format!(
            ".TP\n\\fB{}\\fR ({})\n{}. Remediation: {}.\n",
            escape(code.as_str()),
            escape(severity),
            escape(meaning),
            escape(remediation)
        ));
    }
    roff
}

pub(crate) fn write_main(out: &mut dyn Write) -> std::io::Result<()> {
    let pages = pages()?;
    if let Some((_, page)) = pages.first() {
        out.write_all(page)?;
    }
    Ok(())
}

pub(crate) fn write_dir(dir: &Path) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, page) in pages()? {
        std::fs::write(dir.join(&name), page)?;
        written.push(name);
    }
    Ok(written)
}
