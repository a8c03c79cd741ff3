//! The lines of a cert monitor Event's message (k3s `pkg/certmonitor/certmonitor.go`): a
//! sentence ending in `: `, then one line per certificate,
//! `<service>/<file>: certificate <subject> will expire within <N> days at <RFC3339>`,
//! `... expired at <RFC3339>` or `... is not valid before <RFC3339>`. Releases of 2024
//! joined the lines with `, ` instead of newlines; both are read.

use jiff::Timestamp;

pub(crate) const LEAF_WARNING: &str = "CertificateExpirationWarning";
pub(crate) const CA_WARNING: &str = "CACertificateExpirationWarning";
pub(crate) const OK: &str = "CertificateExpirationOK";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CertState {
    /// Inside the monitor's window, expiring at this time.
    Expiring(Timestamp),
    Expired(Timestamp),
    NotYetValid(Timestamp),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CertLine {
    /// `<service>/<file>`, e.g. `api-server/client-kube-apiserver.crt`.
    pub file: String,
    pub subject: String,
    /// `None` when the line has none of the three shapes (a later k3s may word it otherwise);
    /// the line is still shown.
    pub state: Option<CertState>,
}

/// Every certificate line of `message`; the leading sentence is dropped.
pub(crate) fn cert_lines(message: &str) -> Vec<CertLine> {
    // The sentence contains no ": " before its own end; certificate lines all do.
    let body = message.split_once(": ").map_or(message, |(_, rest)| rest);
    let mut lines: Vec<String> = Vec::new();
    for piece in body.lines().flat_map(|l| l.split(", ")) {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        // Subjects hold no ", " (Go prints `CN=a,O=b`), but a future one could: a piece that
        // is no certificate line continues the previous one.
        match lines.last_mut() {
            Some(last) if !piece.contains(": certificate ") => {
                last.push_str(", ");
                last.push_str(piece);
            }
            _ => lines.push(piece.to_string()),
        }
    }
    lines.iter().map(|l| parse_line(l)).collect()
}

/// How a line's date reads, by the words before it.
type Shape = fn(Timestamp) -> CertState;

fn parse_line(line: &str) -> CertLine {
    let Some((file, rest)) = line.split_once(": certificate ") else {
        return CertLine {
            file: line.to_string(),
            subject: String::new(),
            state: None,
        };
    };
    let shapes: [(&str, Shape); 3] = [
        (" expired at ", CertState::Expired),
        (" is not valid before ", CertState::NotYetValid),
        (" at ", CertState::Expiring),
    ];
    for (marker, state) in shapes {
        let Some(at) = rest.rfind(marker) else {
            continue;
        };
        let (subject, time) = (&rest[..at], &rest[at + marker.len()..]);
        let Ok(time) = time.trim().parse::<Timestamp>() else {
            continue;
        };
        let subject = subject
            .split_once(" will expire within ")
            .map_or(subject, |(s, _)| s);
        return CertLine {
            file: file.to_string(),
            subject: subject.to_string(),
            state: Some(state(time)),
        };
    }
    CertLine {
        file: file.to_string(),
        subject: rest.to_string(),
        state: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEWLINES: &str = "Node certificates require attention - restart k3s on this node to trigger automatic rotation: \
api-server/client-kube-apiserver.crt: certificate CN=system:apiserver,O=system:masters will expire within 90 days at 2024-05-16T00:32:31Z\n\
admin/client-admin.crt: certificate CN=system:admin,O=system:masters expired at 2024-05-01T00:00:00Z\n\
kubelet/serving-kubelet.crt: certificate CN=s1 is not valid before 2024-06-01T00:00:00Z";

    #[test]
    fn reads_each_shape_the_monitor_writes() {
        let lines = cert_lines(NEWLINES);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].file, "api-server/client-kube-apiserver.crt");
        assert_eq!(lines[0].subject, "CN=system:apiserver,O=system:masters");
        assert_eq!(
            lines[0].state,
            Some(CertState::Expiring("2024-05-16T00:32:31Z".parse().unwrap()))
        );
        assert!(matches!(lines[1].state, Some(CertState::Expired(_))));
        assert_eq!(lines[1].subject, "CN=system:admin,O=system:masters");
        assert!(matches!(lines[2].state, Some(CertState::NotYetValid(_))));
    }

    #[test]
    fn reads_the_comma_joined_lines_of_2024() {
        let joined = NEWLINES.replace('\n', ", ");
        assert_eq!(cert_lines(&joined), cert_lines(NEWLINES));
    }

    #[test]
    fn an_unknown_wording_is_kept_without_a_date() {
        let lines = cert_lines("Something: x/y.crt: certificate CN=a will be renewed soon");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].file, "x/y.crt");
        assert_eq!(lines[0].state, None);
        assert!(cert_lines("").is_empty());
    }
}
