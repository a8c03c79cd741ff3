//! The findings block and the one-line summary under every human report.

use std::io::Write;

use super::plural;
use super::style::Style;
use crate::diagnose::finding::{Finding, Severity};

pub fn write_findings(
    out: &mut dyn Write,
    findings: &[Finding],
    style: Style,
) -> std::io::Result<()> {
    for f in findings {
        writeln!(
            out,
            "{} {}  {}",
            style.severity(f.severity),
            style.bold(f.code.as_str()),
            f.object
        )?;
        writeln!(out, "        {}", f.message)?;
        if !f.remediation.is_empty() {
            writeln!(out, "        fix: {}", style.command(&f.remediation))?;
        }
        writeln!(out)?;
    }
    writeln!(out, "{}", summary_line(findings))
}

pub fn summary_line(findings: &[Finding]) -> String {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let (errors, warnings, infos) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    );
    if findings.is_empty() {
        return "healthy: no findings".to_string();
    }
    let mut parts = vec![plural(errors, "error"), plural(warnings, "warning")];
    if infos > 0 {
        parts.push(format!("{infos} info"));
    }
    parts.join(", ")
}
