//! Proxies as kubectl uses them, through a real HTTP CONNECT and SOCKS5
//! proxy on loopback (`faults::forward_proxy`) in front of the fake API server over TLS.

use std::path::{Path, PathBuf};

use crate::support::fake_api::{FakeApi, Role};
use crate::support::faults::forward_proxy::ForwardProxy;
use crate::support::harness::k3sdoctor;
use crate::support::objects::{NOW, server};

/// A kubeconfig trusting the fake server, reaching it as `host` (a `.test` name only the
/// proxy can resolve, or a bracketed IPv6 address, with `tls-server-name: localhost` so the
/// certificate still matches, or `127.0.0.1`), with an optional `proxy-url`.
fn kubeconfig(dir: &Path, fake: &FakeApi, host: &str, proxy_url: Option<&str>) -> PathBuf {
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(fake.ca_pem().unwrap());
    let port = fake.addr().port();
    let proxy = proxy_url.map_or_else(String::new, |p| format!("    proxy-url: {p}\n"));
    let sni = if host.ends_with(".test") || host.starts_with('[') {
        "    tls-server-name: localhost\n"
    } else {
        ""
    };
    let path = dir.join(format!("kubeconfig-{host}-{}.yaml", proxy_url.is_some()));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    certificate-authority-data: {ca}\n    \
             server: https://{host}:{port}\n{sni}{proxy}contexts:\n- name: c\n  context: {{cluster: c, user: u}}\n\
             current-context: c\nusers:\n- name: u\n  user:\n    token: {token}\n",
            token = FakeApi::token(Role::Admin)
        ),
    )
    .unwrap();
    path
}

fn fake() -> FakeApi {
    let fake = FakeApi::start_tls();
    fake.put(server("s1", "v1.30.2+k3s1"));
    fake
}

fn leases_ok(run: crate::support::harness::Run) {
    let out = run.run();
    assert!(
        out.code == 0 || out.code == 1,
        "expected a reading (0 or 1), got {}: {}",
        out.code,
        out.stderr
    );
}

#[test]
fn https_proxy_in_the_environment_carries_the_requests() {
    let (fake, proxy) = (fake(), ForwardProxy::start());
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &fake, "kube-api.test", None);
    let out = k3sdoctor(["leases", "--now", NOW, "-v"])
        .kubeconfig(&kc)
        .env("HTTPS_PROXY", &proxy.http_url())
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    out.stderr_has(&format!("through proxy {}", proxy.http_url()));
    let port = fake.addr().port();
    assert!(
        proxy
            .targets()
            .contains(&format!("CONNECT kube-api.test:{port}")),
        "{:?}",
        proxy.targets()
    );
}

#[test]
fn no_proxy_covering_the_server_goes_direct_as_kubectl_does() {
    // The proxy cannot be reached: any attempt through it would fail the run.
    let (fake, proxy) = (fake(), ForwardProxy::start());
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &fake, "127.0.0.1", None);
    for (name, value) in [("NO_PROXY", "127.0.0.1"), ("no_proxy", "127.0.0.0/8")] {
        leases_ok(
            k3sdoctor(["leases", "--now", NOW])
                .kubeconfig(&kc)
                .env("HTTPS_PROXY", &proxy.http_url())
                .env(name, value),
        );
    }
    // Loopback is never proxied, even without NO_PROXY (Go's httpproxy).
    leases_ok(
        k3sdoctor(["leases", "--now", NOW])
            .kubeconfig(&kc)
            .env("HTTPS_PROXY", &proxy.http_url()),
    );
    assert_eq!(proxy.targets(), Vec::<String>::new());
}

/// IPv4 loopback written as IPv6 is loopback, as in Go's httpproxy
/// (`net.IP.IsLoopback`), so it goes direct; the proxy would have failed the run.
#[test]
fn ipv4_mapped_loopback_is_never_proxied() {
    let (fake, proxy) = (fake(), ForwardProxy::start());
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &fake, "[::ffff:127.0.0.1]", None);
    leases_ok(
        k3sdoctor(["leases", "--now", NOW])
            .kubeconfig(&kc)
            .env("HTTPS_PROXY", &proxy.http_url()),
    );
    assert_eq!(proxy.targets(), Vec::<String>::new());
}

/// Go's httpproxy skips empty `NO_PROXY` elements, so a trailing comma is
/// no error (kube's own parser refused the whole kubeconfig for it), and the other entries
/// still count: `foo,` leaves the server proxied, `,127.0.0.0/8,` sends it direct.
#[test]
fn empty_no_proxy_elements_are_skipped_as_go_skips_them() {
    let (fake, proxy) = (fake(), ForwardProxy::start());
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &fake, "kube-api.test", None);
    let out = k3sdoctor(["leases", "--now", NOW])
        .kubeconfig(&kc)
        .env("HTTPS_PROXY", &proxy.http_url())
        .env("NO_PROXY", "foo,")
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    assert!(!out.stderr.contains("--context"), "{}", out.stderr);
    let port = fake.addr().port();
    let tunnels = proxy.targets();
    assert!(!tunnels.is_empty(), "nothing went through the proxy");
    assert!(
        tunnels
            .iter()
            .all(|t| *t == format!("CONNECT kube-api.test:{port}")),
        "{tunnels:?}"
    );
    // `*test` is no wildcard in Go (only `*.` is): the server stays proxied beside it.
    let out = k3sdoctor(["leases", "--now", NOW])
        .kubeconfig(&kc)
        .env("HTTPS_PROXY", &proxy.http_url())
        .env("no_proxy", ",*test,, ")
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    assert!(
        proxy.targets().len() > tunnels.len(),
        "{:?}",
        proxy.targets()
    );
}

#[test]
fn no_proxy_naming_the_domain_skips_the_proxy_for_a_name() {
    let (fake, proxy) = (fake(), ForwardProxy::start());
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &fake, "kube-api.test", None);
    // Not proxied, the .test name resolves nowhere: kubectl fails the same way (exit 3).
    k3sdoctor(["leases", "--now", NOW])
        .kubeconfig(&kc)
        .env("HTTPS_PROXY", &proxy.http_url())
        .env("NO_PROXY", ".example.org,test")
        .run()
        .code(3);
    assert_eq!(proxy.targets(), Vec::<String>::new());
}

#[test]
fn kubeconfig_proxy_url_is_used_whatever_no_proxy_says() {
    let (fake, proxy) = (fake(), ForwardProxy::start());
    let dir = tempfile::tempdir().unwrap();
    let port = fake.addr().port();
    let kc = kubeconfig(dir.path(), &fake, "127.0.0.1", Some(&proxy.http_url()));
    leases_ok(
        k3sdoctor(["leases", "--now", NOW])
            .kubeconfig(&kc)
            .env("NO_PROXY", "*"),
    );
    let targets = proxy.targets();
    assert!(!targets.is_empty(), "nothing went through the proxy");
    assert!(
        targets
            .iter()
            .all(|t| *t == format!("CONNECT 127.0.0.1:{port}")),
        "{targets:?}"
    );
}

#[test]
fn socks5_proxy_from_kubeconfig_and_environment() {
    let (fake, proxy) = (fake(), ForwardProxy::start());
    let dir = tempfile::tempdir().unwrap();
    let port = fake.addr().port();
    let kc = kubeconfig(dir.path(), &fake, "127.0.0.1", Some(&proxy.socks5_url()));
    leases_ok(k3sdoctor(["leases", "--now", NOW]).kubeconfig(&kc));
    assert!(
        proxy
            .targets()
            .contains(&format!("SOCKS5 127.0.0.1:{port}")),
        "{:?}",
        proxy.targets()
    );
    let kc = kubeconfig(dir.path(), &fake, "kube-api.test", None);
    leases_ok(
        k3sdoctor(["leases", "--now", NOW])
            .kubeconfig(&kc)
            .env("HTTPS_PROXY", &proxy.socks5_url()),
    );
    assert!(
        proxy
            .targets()
            .iter()
            .any(|t| t.starts_with("SOCKS5 ") && t.ends_with(&format!(":{port}"))),
        "{:?}",
        proxy.targets()
    );
}

#[test]
fn a_proxy_that_fails_is_named_not_the_api_server() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let kc = kubeconfig(dir.path(), &fake, "kube-api.test", None);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    for proxy in [
        format!("http://user:s3cret@127.0.0.1:{port}"),
        format!("socks5://127.0.0.1:{port}"),
    ] {
        let out = k3sdoctor(["leases", "--now", NOW])
            .kubeconfig(&kc)
            .env("HTTPS_PROXY", &proxy)
            .run();
        out.code(3)
            .one_line_error()
            .stderr_has("the proxy on the way to https://kube-api.test:")
            .stderr_has("HTTPS_PROXY, NO_PROXY or the kubeconfig's proxy-url");
        assert!(!out.stderr.contains("s3cret"), "{}", out.stderr);
    }
}
