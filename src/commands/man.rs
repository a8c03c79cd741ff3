//! `k3sdoctor man`: the man pages, generated from the same clap definitions as `--help`.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use crate::cli::Cli;

/// The top page and one page per subcommand, as (file name, contents).
pub fn pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let top = Cli::command();
    let mut pages = Vec::new();
    let mut buf = Vec::new();
    clap_mangen::Man::new(top.clone()).render(&mut buf)?;
    pages.push(("k3sdoctor.1".to_string(), buf));
    for sub in top.get_subcommands() {
        let name = format!("k3sdoctor-{}", sub.get_name());
        let mut buf = Vec::new();
        clap_mangen::Man::new(sub.clone().name(name.clone())).render(&mut buf)?;
        pages.push((format!("{name}.1"), buf));
    }
    Ok(pages)
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
