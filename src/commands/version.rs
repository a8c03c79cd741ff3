//! `k3sdoctor version` (and `--version -v`): what this binary is and how it was built.

use super::Ui;
use crate::build_info::BuildInfo;
use crate::exit::Exit;
use crate::render;
use crate::settings::Settings;

pub(crate) fn run(settings: &Settings, name: &str, ui: &mut Ui) -> anyhow::Result<Exit> {
    let info = BuildInfo::current();
    let written = if settings.output.format.is_structured() {
        render::write_structured(&mut ui.out, settings.output.format, &info)
    } else {
        info.lines(name)
            .iter()
            .try_for_each(|line| writeln!(ui.out, "{line}"))
            .map_err(Into::into)
    };
    render::tolerate_closed_pipe(written)?;
    Ok(Exit::Healthy)
}
