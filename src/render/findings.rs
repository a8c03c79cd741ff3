//! The findings block and the one-line summary under every human report.

use std::io::Write;

use super::plural;
use super::style::Style;
use super::wrap::write_wrapped;
use crate::diagnose::finding::{FailOn, Finding, Severity};

pub(crate) fn write_findings(
    out: &mut dyn Write,
    findings: &[Finding],
    fail_on: FailOn,
    style: Style,
) -> std::io::Result<()> {
    write_finding_list(out, findings, style)?;
    writeln!(out, "{}", summary_line(findings, fail_on))
}

/// The findings, a blank line after each, without the summary line.
pub(crate) fn write_finding_list(
    out: &mut dyn Write,
    findings: &[Finding],
    style: Style,
) -> std::io::Result<()> {
    for (i, f) in findings.iter().enumerate() {
        writeln!(
            out,
            "{} {}  {}",
            style.severity(f.severity),
            style.bold(f.code.as_str()),
            short_object(&f.object)
        )?;
        let same_as = same_list_as(f, findings[..i].iter());
        write_body(out, f, "        ", style, same_as)?;
        writeln!(out)?;
    }
    Ok(())
}

/// An earlier finding that lists exactly the objects `f` lists (in any order): `f` then says
/// "the same 15 as snapshot-missing-from-configmap above" instead of the names a second time.
pub(crate) fn same_list_as<'a>(
    f: &Finding,
    earlier: impl Iterator<Item = &'a Finding>,
) -> Option<&'a Finding> {
    if f.listed_len() < 2 {
        return None;
    }
    let mut mine = f.listed();
    mine.sort_unstable();
    earlier.filter(|e| e.listed_len() == mine.len()).find(|e| {
        let mut theirs = e.listed();
        theirs.sort_unstable();
        theirs == mine
    })
}

/// The object as the first line of a finding names it: k3s keeps every namespaced object it
/// elects or books snapshots with in kube-system, so the namespace is dropped there to keep
/// severity, code and object on one 80-column line. JSON and YAML keep the full name.
pub(crate) fn short_object(object: &str) -> String {
    super::control_chars::escape_controls(&object.replacen(" kube-system/", " ", 1)).into_owned()
}

/// A finding's message and fix under its first line, wrapped to the output width; `indent`
/// is where the text column starts, and the fix's continuation lines hang under its command.
pub(crate) fn write_body(
    out: &mut dyn Write,
    f: &Finding,
    indent: &str,
    style: Style,
    same_as: Option<&Finding>,
) -> std::io::Result<()> {
    write_wrapped(out, &short_message(f, same_as), indent, indent, style.width)?;
    if !f.remediation.is_empty() {
        let fix = format!("fix: {}", style.command(&f.remediation));
        write_wrapped(out, &fix, indent, &format!("{indent}     "), style.width)?;
    }
    Ok(())
}

/// The message with its long list cut to five items, saying where the rest are, or replaced
/// by a pointer to the finding above that lists the same objects; JSON and YAML carry the
/// whole list.
fn short_message(f: &Finding, same_as: Option<&Finding>) -> String {
    const SHOWN: usize = 5;
    let listed = f.listed_len();
    if let Some(earlier) = same_as {
        let pointer = format!("the same {listed} as {} above", earlier.code.as_str());
        return f.message.with_list_as(&pointer);
    }
    if listed <= SHOWN {
        return f.message.to_string();
    }
    let short = format!(
        "{} (and {} more; -o json lists all)",
        f.message.first_items(SHOWN),
        listed - SHOWN
    );
    f.message.with_list_as(&short)
}

/// `2 errors, 1 warning`; under `--fail-on never` it says that they leave the exit code at 0,
/// so a count of errors never sits next to a silent success.
pub(crate) fn summary_line(findings: &[Finding], fail_on: FailOn) -> String {
    let ignored = findings.iter().filter(|f| f.ignored).count();
    let counted: Vec<&Finding> = findings.iter().filter(|f| !f.ignored).collect();
    let line = counted_line(&counted, fail_on);
    if ignored == 0 {
        line
    } else {
        format!("{line}; {ignored} ignored (--ignore or the config file)")
    }
}

fn counted_line(findings: &[&Finding], fail_on: FailOn) -> String {
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
    fn long_lists_are_cut_to_five_in_the_table_only() {
        let names: Vec<String> = (1..=7).map(|i| format!("s{i}")).collect();
        let f = Finding::new(
            Severity::Error,
            FindingCode::SnapshotControllerIdle,
            "ETCDSnapshotFiles",
            format!("7 lack it: {}. Cause: x", names.join(", ")),
        )
        .listing(&names);
        assert_eq!(
            short_message(&f, None),
            "7 lack it: s1, s2, s3, s4, s5 (and 2 more; -o json lists all). Cause: x"
        );
        let few = Finding::new(Severity::Error, FindingCode::LeaseSplit, "x", "a, b");
        assert_eq!(short_message(&few, None), "a, b");
    }

    #[test]
    fn a_list_an_earlier_finding_spelled_out_is_named_once() {
        let names: Vec<String> = (1..=3).map(|i| format!("s{i}")).collect();
        let reversed: Vec<String> = names.iter().rev().cloned().collect();
        let first = Finding::new(
            Severity::Error,
            FindingCode::SnapshotMissingFromConfigmap,
            "ConfigMap k3s-etcd-snapshots",
            format!("3 are missing: {}", names.join(", ")),
        )
        .listing(&names);
        let second = Finding::new(
            Severity::Error,
            FindingCode::SnapshotControllerIdle,
            "ETCDSnapshotFiles",
            format!("3 lack it: {}. Cause: x", reversed.join(", ")),
        )
        .listing(&reversed);
        let other = Finding::new(
            Severity::Warning,
            FindingCode::SnapshotDeletionStuck,
            "ETCDSnapshotFiles",
            "2 stuck: s1, s2",
        )
        .listing(&names[..2]);
        // Same objects in another order: named once. A different set: spelled out.
        let same = same_list_as(&second, [&first].into_iter());
        assert_eq!(
            short_message(&second, same),
            "3 lack it: the same 3 as snapshot-missing-from-configmap above. Cause: x"
        );
        assert!(same_list_as(&other, [&first, &second].into_iter()).is_none());
        assert!(same_list_as(&first, std::iter::empty()).is_none());
        let mut out = Vec::new();
        write_finding_list(&mut out, &[first, second], Style::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("s3").count(), 1, "{text}");
    }

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
