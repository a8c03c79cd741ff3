//! The findings block and the one-line summary under every human report.

use std::io::Write;

use super::plural;
use super::style::Style;
use crate::diagnose::finding::{FailOn, Finding, Severity};

pub fn write_findings(
    out: &mut dyn Write,
    findings: &[Finding],
    fail_on: FailOn,
    style: Style,
) -> std::io::Result<()> {
    write_finding_list(out, findings, style)?;
    writeln!(out, "{}", summary_line(findings, fail_on))
}

/// The findings, a blank line after each, without the summary line.
pub fn write_finding_list(
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
    Ok(())
}

/// `2 errors, 1 warning`; under `--fail-on never` it says that they leave the exit code at 0,
/// so a count of errors never sits next to a silent success.
pub fn summary_line(findings: &[Finding], fail_on: FailOn) -> String {
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
    let counts = parts.join(", ");
    if fail_on == FailOn::Never && errors + warnings > 0 {
        format!("{counts}; not counted in the exit code (--fail-on never)")
    } else {
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::finding::FindingCode;

    #[test]
    fn summary_says_when_findings_do_not_count() {
        let findings = [
            Finding::new(Severity::Error, FindingCode::LeaseSplit, "x", "y"),
            Finding::new(Severity::Warning, FindingCode::MixedVersions, "x", "y"),
        ];
        assert_eq!(summary_line(&findings, FailOn::Error), "1 error, 1 warning");
        assert_eq!(
            summary_line(&findings, FailOn::Never),
            "1 error, 1 warning; not counted in the exit code (--fail-on never)"
        );
        assert_eq!(summary_line(&[], FailOn::Never), "healthy: no findings");
    }
}
