//! Connecting as kubectl does, against the real kube-apiserver: through a
//! loopback HTTP CONNECT proxy named by `HTTPS_PROXY`, through a SOCKS5 `proxy-url`, and with
//! the server's own kubeconfig when the user has none. They only read, so they share one bed.

use crate::support::envtest::{EnvTest, User};
use crate::support::faults::forward_proxy::ForwardProxy;
use crate::support::harness::k3sdoctor;

/// The admin kubeconfig with its `server:` host replaced by `host` and `extra` lines added
/// next to it (same indentation).
fn rewritten(env: &EnvTest, name: &str, host: &str, extra: &[String]) -> std::path::PathBuf {
    let text = std::fs::read_to_string(env.kubeconfig(User::Admin)).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(url) = trimmed.strip_prefix("server: ") {
            let indent = &line[..line.len() - trimmed.len()];
            let url = url.trim_matches('"').replace("127.0.0.1", host);
            out.push_str(&format!("{indent}server: {url}\n"));
            for e in extra {
                out.push_str(&format!("{indent}{e}\n"));
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    let path = env.scratch_for("connecting").join(name);
    std::fs::write(&path, out).unwrap();
    path
}

fn port_of(env: &EnvTest) -> String {
    env.server().rsplit(':').next().unwrap().to_string()
}

#[test]
fn real_https_proxy_carries_the_requests() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let proxy = ForwardProxy::start();
    let kc = rewritten(
        env,
        "via-connect.yaml",
        "kube-api.test",
        &["tls-server-name: localhost".to_string()],
    );
    let out = k3sdoctor(["leases", "-o", "json"])
        .kubeconfig(&kc)
        .env("HTTPS_PROXY", &proxy.http_url())
        .env("NO_PROXY", "localhost,127.0.0.1,.example.org")
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let target = format!("CONNECT kube-api.test:{}", port_of(env));
    assert!(proxy.targets().contains(&target), "{:?}", proxy.targets());
}

#[test]
fn real_socks5_proxy_url_carries_the_requests() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let proxy = ForwardProxy::start();
    let kc = rewritten(
        env,
        "via-socks.yaml",
        "127.0.0.1",
        &[format!("proxy-url: {}", proxy.socks5_url())],
    );
    let out = k3sdoctor(["leases", "-o", "json"]).kubeconfig(&kc).run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let target = format!("SOCKS5 127.0.0.1:{}", port_of(env));
    assert!(proxy.targets().contains(&target), "{:?}", proxy.targets());
}

#[test]
fn real_server_kubeconfig_is_used_when_the_user_has_none() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let admin = env.kubeconfig(User::Admin);
    let out = k3sdoctor(["leases", "-o", "json"])
        .env(
            "K3SDOCTOR_TEST_SERVER_KUBECONFIGS",
            &admin.display().to_string(),
        )
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    out.stderr_has(&format!("using {}:", admin.display()));
    let report: serde_json::Value = out.json();
    assert!(report.is_object(), "{}", out.stdout);
}

#[test]
fn real_as_and_as_group_impersonate_through_rbac() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let admin = env.kubeconfig(User::Admin);
    let out = k3sdoctor(["leases", "--as", "nobody"])
        .kubeconfig(&admin)
        .run();
    out.code(3).one_line_error();
    out.stderr_has("nobody");
    let out = k3sdoctor(["leases", "--as", "nobody", "--as-group", "system:masters"])
        .kubeconfig(&admin)
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    // -n kube-system is where it reads anyway.
    let out = k3sdoctor(["leases", "-n", "kube-system"])
        .kubeconfig(&admin)
        .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
}

#[test]
fn real_server_and_token_without_a_kubeconfig() {
    let Some(env) = EnvTest::shared() else {
        return;
    };
    let text = std::fs::read_to_string(env.kubeconfig(User::Admin)).unwrap();
    let token = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .expect("the admin kubeconfig has a token")
        .trim_matches('"')
        .to_string();
    let ca = env.scratch_for("connecting").join("ca-from-kubeconfig.crt");
    let data = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
        .expect("CA embedded");
    use base64::Engine as _;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data.trim_matches('"'))
        .unwrap();
    std::fs::write(&ca, pem).unwrap();
    let server = env.server().to_string();
    let ca = ca.display().to_string();
    let out = k3sdoctor([
        "leases",
        "--server",
        &server,
        "--token",
        &token,
        "--certificate-authority",
        &ca,
    ])
    .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    // Without the CA the server's certificate is not trusted; with the flag it need not be.
    k3sdoctor(["leases", "--server", &server, "--token", &token])
        .run()
        .code(3);
    let out = k3sdoctor([
        "leases",
        "--server",
        &server,
        "--token",
        &token,
        "--insecure-skip-tls-verify",
    ])
    .run();
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
}
