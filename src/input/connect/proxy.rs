//! Which proxy, if any, a connection to the API server goes through, decided the way kubectl
//! decides it (client-go `rest.Config.Proxy`, else Go's `http.ProxyFromEnvironment`, i.e.
//! golang.org/x/net/http/httpproxy `config.proxyForURL` and `useProxy`):
//! - a kubeconfig cluster's `proxy-url` is used for every request, whatever `NO_PROXY` says;
//! - else `HTTPS_PROXY`/`https_proxy` for an `https://` server, `HTTP_PROXY`/`http_proxy` for
//!   an `http://` one (the upper-case name first, an empty value counting as unset);
//! - `localhost` and loopback addresses (`::ffff:127.0.0.1` too) are never proxied;
//! - `NO_PROXY`/`no_proxy` is a comma-separated list of `*` (nothing is proxied), IPs, CIDRs,
//!   and domains (`example.com` matches it and its subdomains, `.example.com` and
//!   `*.example.com` only subdomains), each optionally with `:port`; empty entries and
//!   entries Go cannot parse are skipped, not errors.
//!
//! kube's own choice differs (it compares `NO_PROXY` with the proxy's address, not the
//! server's, applies it to `proxy-url` too, and refuses entries Go skips), so kube is never
//! asked (`kube_config.rs`) and this choice is the only one. Pure: the environment is a
//! parameter.

use std::net::IpAddr;

use ipnet::IpNet;

/// The proxy URL for `server`, or `None` to connect directly. `env` looks up a variable.
pub(super) fn proxy_for(
    server: &http::Uri,
    kubeconfig_proxy: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if let Some(url) = kubeconfig_proxy.filter(|u| !u.is_empty()) {
        return Some(url.to_string());
    }
    let any = |names: [&str; 2]| names.iter().find_map(|n| env(n).filter(|v| !v.is_empty()));
    let proxy = match server.scheme_str() {
        Some("https") => any(["HTTPS_PROXY", "https_proxy"]),
        Some("http") => any(["HTTP_PROXY", "http_proxy"]),
        _ => None,
    }?;
    let host = server.host()?.trim_start_matches('[').trim_end_matches(']');
    let port = server
        .port_u16()
        .unwrap_or(if server.scheme_str() == Some("http") {
            80
        } else {
            443
        });
    let no_proxy = any(["NO_PROXY", "no_proxy"]).unwrap_or_default();
    if !use_proxy(host, port, &no_proxy) {
        return None;
    }
    Some(with_scheme(&proxy))
}

/// Go's `parseProxy`: a value without a known scheme (`proxy:3128`) means `http://`.
fn with_scheme(proxy: &str) -> String {
    let known = ["http://", "https://", "socks5://", "socks5h://"];
    if known
        .iter()
        .any(|s| proxy.len() >= s.len() && proxy[..s.len()].eq_ignore_ascii_case(s))
    {
        proxy.to_string()
    } else {
        format!("http://{proxy}")
    }
}

/// httpproxy's `useProxy` (golang.org/x/net/http/httpproxy/proxy.go, with its `config.init`
/// parse of `NO_PROXY`): false when the host is local or `NO_PROXY` covers it. Empty entries
/// are skipped; only `*.` is a wildcard prefix (`*svc` is a name no host has), and IPv4
/// written as IPv6 (`::ffff:127.0.0.1`) is the IPv4 address, as Go's `net.IP` compares them.
fn use_proxy(host: &str, port: u16, no_proxy: &str) -> bool {
    // Go compares with "localhost" before it lower-cases the host.
    if host == "localhost" {
        return false;
    }
    let ip: Option<IpAddr> = host.parse::<IpAddr>().ok().map(|ip| ip.to_canonical());
    if ip.is_some_and(|ip| ip.is_loopback()) {
        return false;
    }
    let host = host.trim().to_ascii_lowercase();
    let port = port.to_string();
    for entry in no_proxy.split(',') {
        let entry = entry.trim().to_ascii_lowercase();
        if entry.is_empty() {
            continue;
        }
        if entry == "*" {
            return false;
        }
        if let Ok(net) = entry.parse::<IpNet>() {
            if ip.is_some_and(|ip| net_contains(&net, ip)) {
                return false;
            }
            continue;
        }
        let (entry_host, entry_port) = split_host_port(&entry);
        if entry_host.is_empty() {
            continue;
        }
        let port_ok = entry_port.is_empty() || entry_port == port;
        if let Ok(entry_ip) = entry_host.parse::<IpAddr>() {
            if ip == Some(entry_ip.to_canonical()) && port_ok {
                return false;
            }
            continue;
        }
        let entry_host = entry_host
            .strip_prefix('*')
            .filter(|h| h.starts_with('.'))
            .unwrap_or(entry_host);
        let (suffix, match_host) = match entry_host.strip_prefix('.') {
            Some(_) => (entry_host.to_string(), false),
            None => (format!(".{entry_host}"), true),
        };
        if (host.ends_with(&suffix) || (match_host && host == suffix[1..])) && port_ok {
            return false;
        }
    }
    true
}

/// Go's `IPNet.Contains`: an IPv4 network written as IPv6 (`::ffff:10.0.0.0/104`) is the
/// IPv4 network (`10.0.0.0/8`); any other IPv6 network holds no IPv4 address.
fn net_contains(net: &IpNet, ip: IpAddr) -> bool {
    if let IpNet::V6(v6) = net
        && let Some(v4) = v6.network().to_ipv4_mapped()
    {
        let prefix = v6.prefix_len().saturating_sub(96);
        return ipnet::Ipv4Net::new(v4, prefix).is_ok_and(|n| IpNet::V4(n).contains(&ip));
    }
    net.contains(&ip)
}

/// httpproxy's parse of one entry: `net.SplitHostPort` when it works (brackets dropped),
/// else the whole entry with no port (so a bare IPv6 address is an address).
fn split_host_port(entry: &str) -> (&str, &str) {
    let split = if let Some(rest) = entry.strip_prefix('[') {
        rest.split_once(']')
            .and_then(|(host, after)| Some((host, after.strip_prefix(':')?)))
    } else {
        entry
            .rsplit_once(':')
            .filter(|(host, _)| !host.contains(':'))
    };
    split.unwrap_or((entry, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy(server: &str, kubeconfig: Option<&str>, vars: &[(&str, &str)]) -> Option<String> {
        let server: http::Uri = server.parse().unwrap();
        let env = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        };
        proxy_for(&server, kubeconfig, &env)
    }

    const P: &str = "http://proxy:3128";

    #[test]
    fn https_proxy_is_used_for_an_https_server() {
        assert_eq!(
            proxy("https://10.0.0.1:6443", None, &[("HTTPS_PROXY", P)]),
            Some(P.into())
        );
        assert_eq!(
            proxy("https://api.example.com", None, &[("https_proxy", P)]),
            Some(P.into())
        );
        assert_eq!(
            proxy("https://10.0.0.1:6443", None, &[("HTTP_PROXY", P)]),
            None
        );
        assert_eq!(
            proxy("http://10.0.0.1:8080", None, &[("HTTP_PROXY", P)]),
            Some(P.into())
        );
    }

    #[test]
    fn upper_case_wins_and_empty_counts_as_unset() {
        let vars = [("HTTPS_PROXY", "http://upper:1"), ("https_proxy", P)];
        assert_eq!(
            proxy("https://10.0.0.1", None, &vars),
            Some("http://upper:1".into())
        );
        let vars = [("HTTPS_PROXY", ""), ("https_proxy", P)];
        assert_eq!(proxy("https://10.0.0.1", None, &vars), Some(P.into()));
    }

    #[test]
    fn a_proxy_without_scheme_is_http_and_socks5_is_kept() {
        assert_eq!(
            proxy("https://10.0.0.1", None, &[("HTTPS_PROXY", "proxy:3128")]),
            Some(P.into())
        );
        assert_eq!(
            proxy(
                "https://10.0.0.1",
                None,
                &[("HTTPS_PROXY", "socks5://s:1080")]
            ),
            Some("socks5://s:1080".into())
        );
    }

    #[test]
    fn loopback_and_localhost_are_never_proxied() {
        for server in [
            "https://127.0.0.1:6443",
            "https://127.1.2.3:6443",
            "https://localhost:6443",
            "https://[::1]:6443",
            "https://[::ffff:127.0.0.1]:6443",
            "https://[::FFFF:7f00:1]:6443",
        ] {
            assert_eq!(proxy(server, None, &[("HTTPS_PROXY", P)]), None, "{server}");
        }
    }

    #[test]
    fn no_proxy_matches_the_server_as_go_does() {
        let cases = [
            ("https://10.0.0.1:6443", "10.0.0.1", false),
            ("https://10.0.0.1:6443", "10.0.0.2", true),
            ("https://10.0.0.1:6443", "10.0.0.0/8", false),
            ("https://10.0.0.1:6443", "192.168.0.0/16", true),
            ("https://10.0.0.1:6443", "10.0.0.1:6443", false),
            ("https://10.0.0.1:6443", "10.0.0.1:443", true),
            ("https://api.example.com:6443", "example.com", false),
            ("https://example.com:6443", "example.com", false),
            ("https://example.com:6443", ".example.com", true),
            ("https://api.example.com:6443", ".example.com", false),
            ("https://api.example.com:6443", "*.example.com", false),
            ("https://example.com:6443", "*.example.com", true),
            ("https://notexample.com:6443", "example.com", true),
            ("https://API.Example.com:6443", "api.EXAMPLE.com", false),
            ("https://api.example.com", "api.example.com:443", false),
            ("https://api.example.com:6443", "*", false),
            (
                "https://api.example.com:6443",
                " other.org , ,example.com ",
                false,
            ),
            // A bare IPv6 address is an address, as in Go.
            ("https://[fd00::1]:6443", "fd00::1", false),
            ("https://[fd00::1]:6443", "[fd00::1]:6443", false),
            // Empty entries are skipped, as Go skips them.
            ("https://10.0.0.1:6443", "foo,", true),
            ("https://10.0.0.1:6443", ",,10.0.0.1,", false),
            ("https://10.0.0.1:6443", ",", true),
            // Only `*.` is a wildcard: Go reads `*svc` as a name no host has.
            ("https://api.svc:6443", "*svc", true),
            ("https://svc:6443", "*svc", true),
            ("https://api.svc:6443", "*.svc", false),
            // IPv4 written as IPv6 is the IPv4 address, both ways, as Go's net.IP.
            ("https://[::ffff:10.0.0.1]:6443", "10.0.0.1", false),
            ("https://10.0.0.1:6443", "::ffff:10.0.0.1", false),
            ("https://[::ffff:10.0.0.1]:6443", "10.0.0.0/8", false),
            ("https://10.0.0.1:6443", "::ffff:10.0.0.0/104", false),
            ("https://10.0.0.1:6443", "::/0", true),
        ];
        for (server, no_proxy, proxied) in cases {
            let got = proxy(server, None, &[("HTTPS_PROXY", P), ("NO_PROXY", no_proxy)]);
            assert_eq!(
                got.is_some(),
                proxied,
                "{server} with NO_PROXY={no_proxy:?}"
            );
        }
        let lower = [("HTTPS_PROXY", P), ("no_proxy", "10.0.0.1")];
        assert_eq!(proxy("https://10.0.0.1", None, &lower), None);
    }

    #[test]
    fn a_kubeconfig_proxy_url_ignores_no_proxy_and_loopback() {
        let vars = [("HTTPS_PROXY", "http://env:1"), ("NO_PROXY", "*")];
        assert_eq!(
            proxy("https://127.0.0.1:6443", Some("socks5://s:1080"), &vars),
            Some("socks5://s:1080".into())
        );
        assert_eq!(proxy("https://10.0.0.1", Some(""), &vars), None);
    }
}
