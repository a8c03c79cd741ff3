//! `k3sdoctor version` (and `--version -v`): what this binary is and how it was built
//! (issue 29, item 14).

use super::Ui;
use crate::build_info::BuildInfo;
use crate::cli::GlobalArgs;
use crate::exit::Exit;
use crate::render;

pub fn run(global: &GlobalArgs, name: &str, ui: &mut Ui) -> anyhow::Result<Exit> {
    let info = BuildInfo::current();
    let written = if global.output.is_structured() {
        render::write_structured(&mut ui.out, global.output, &info)
    } else {
        info.lines(name)
            .iter()
            .try_for_each(|line| writeln!(ui.out, "{line}"))
            .map_err(Into::into)
    };
    render::tolerate_closed_pipe(written)?;
    Ok(Exit::Healthy)
}
