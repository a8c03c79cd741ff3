//! `k3sdoctor man`: the man pages, generated from the same clap definitions as `--help`.

use std::io::Write;
use std::path::Path;

use crate::diagnose::finding::FindingCode;

/// The top page and one page per subcommand, as (file name, contents).
pub fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let top = crate::cli::command();
    let mut pages = Vec::new();
    let mut buf = Vec::new();
    clap_mangen::Man::new(top.clone()).render(&mut buf)?;
    buf.extend_from_slice(finding_codes_section().as_bytes());
    pages.push(("k3sdoctor.1".to_string(), buf));
    add_subcommand_pages(&top, "k3sdoctor", &mut pages)?;
    Ok(pages)
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

/// `k3sdoctor-leases.1`, `k3sdoctor-leases-follow.1`, ...: one page per command, nested ones too.
fn add_subcommand_pages(
    cmd: &clap::Command,
    prefix: &str,
    pages: &mut Vec<(String, Vec<u8>)>,
) -> std::io::Result<()> {
    // clap's `help` subcommand only repeats `--help`; it gets no page of its own.
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("{prefix}-{}", sub.get_name());
        let mut buf = Vec::new();
        clap_mangen::Man::new(sub.clone().name(name.clone())).render(&mut buf)?;
        pages.push((format!("{name}.1"), buf));
        add_subcommand_pages(sub, &name, pages)?;
    }
    Ok(())
}

pub fn write_main(out: &mut dyn Write) -> std::io::Result<()> {
    let pages = pages()?;
    if let Some((_, page)) = pages.first() {
        out.write_all(page)?;
    }
    Ok(())
}

pub fn write_dir(dir: &Path) -> std::io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, page) in pages()? {
        std::fs::write(dir.join(&name), page)?;
        written.push(name);
    }
    Ok(written)
}
