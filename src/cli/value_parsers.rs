//! Parsers for flag values that clap has no type for: kubectl's durations and RFC 3339 times.

use std::time::Duration;

use jiff::Timestamp;

use super::RequestTimeout;

/// kubectl's forms: a bare number of seconds, or a Go duration such as `500ms`, `30s`,
/// `1m30s`, `1.5m`, `2h`; jiff's friendly format reads them (and `1 minute`, `2h 30m`).
pub fn parse_request_timeout(text: &str) -> Result<RequestTimeout, String> {
    let text = text.trim();
    let invalid = || format!("{text:?} is not a duration; use e.g. 30s, 1.5m or 0 for no limit");
    let duration = if let Ok(secs) = text.parse::<u64>() {
        Duration::from_secs(secs)
    } else {
        let signed: jiff::SignedDuration = text.parse().map_err(|_| invalid())?;
        Duration::try_from(signed).map_err(|_| invalid())?
    };
    Ok(RequestTimeout((!duration.is_zero()).then_some(duration)))
}

/// `--timeout`: like `--request-timeout`, but it must be a real wait.
pub(super) fn parse_wait(text: &str) -> Result<Duration, String> {
    parse_request_timeout(text)?.0.ok_or_else(|| {
        format!("{text:?}: the timeout must be longer than 0; use --no-wait not to wait")
    })
}

/// `--heal-after`, `--heal-cooldown`: a duration longer than 0.
pub(super) fn parse_period(text: &str) -> Result<Duration, String> {
    parse_request_timeout(text)?
        .0
        .ok_or_else(|| format!("{text:?}: must be longer than 0; e.g. 5m or 30m"))
}

/// `--listen`: `ADDR:PORT`, or Go's `:PORT` for every interface (IPv4, like the default).
pub(super) fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    let trimmed = text.trim();
    let full = match trimmed.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => trimmed.to_string(),
    };
    full.parse().map_err(|_| {
        format!(
            "{text:?} is not an address and port; use e.g. :9810, 0.0.0.0:9810 or 127.0.0.1:9810"
        )
    })
}

/// `-n`: k3s and RKE2 keep both locks (pkg/server/server.go, wrangler's leader election) and
/// the `k3s-etcd-snapshots` ConfigMap in kube-system; another namespace holds nothing to read.
pub(super) fn parse_namespace(text: &str) -> Result<String, String> {
    match text.trim() {
        "kube-system" => Ok("kube-system".into()),
        _ => Err(format!(
            "k3sdoctor reads only kube-system, where k3s and RKE2 keep their locks and snapshot records; \
             drop -n or use -n kube-system (not {text:?})"
        )),
    }
}

pub(super) fn parse_regex(text: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(text).map_err(|e| {
        // The regex crate's message is a multi-line diagram; its last line says what is wrong.
        let why = e.to_string();
        let why = why
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .to_string();
        format!(
            "{text:?} is not a regular expression: {}",
            why.trim_start_matches("error: ")
        )
    })
}

pub(super) fn parse_now(text: &str) -> Result<Timestamp, String> {
    text.trim()
        .parse::<Timestamp>()
        .map_err(|e| format!("{text:?} is not an RFC 3339 time such as 2024-05-31T12:10:40Z: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_go_style() {
        let at = |t: &str| parse_listen(t).map(|a| a.to_string());
        assert_eq!(at(":9811").unwrap(), "0.0.0.0:9811");
        assert_eq!(at("127.0.0.1:9811").unwrap(), "127.0.0.1:9811");
        assert_eq!(at("[::1]:9811").unwrap(), "[::1]:9811");
        for bad in ["", ":", "9811", ":x", "nowhere", ":99999"] {
            assert!(at(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn request_timeouts_like_kubectl() {
        let ms = |t: &str| parse_request_timeout(t).unwrap().0.map(|d| d.as_millis());
        assert_eq!(ms("0"), None);
        assert_eq!(ms("5"), Some(5000));
        assert_eq!(ms("30s"), Some(30_000));
        assert_eq!(ms("1m30s"), Some(90_000));
        assert_eq!(ms("250ms"), Some(250));
        assert_eq!(ms("2h"), Some(7_200_000));
        assert_eq!(ms("1.5m"), Some(90_000));
        assert_eq!(ms("1.5s"), Some(1500));
        assert_eq!(ms("0.5h"), Some(1_800_000));
        assert_eq!(ms("1h2m3s"), Some(3_723_000));
        assert_eq!(ms("0s"), None);
        for bad in ["", "s", "1x", "-1s", "-1.5m", "m1", "99999999999999999999"] {
            assert!(parse_request_timeout(bad).is_err(), "{bad}");
        }
    }
}
