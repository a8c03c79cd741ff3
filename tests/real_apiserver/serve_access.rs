//! serve's `/metrics` and `/report` closed by default, on a real
//! kube-apiserver with its static tokens: no token, a wrong token and a token of a user
//! without the non-resource URL rule are refused; a user bound to deploy/'s
//! k3sdoctor-metrics-reader is answered on `/metrics` (and only there). serve's own account
//! needs `k3sdoctor rbac serve`'s token reviews: without them it says it cannot check (503).

use std::time::Duration;

use crate::common::viewer_with_every_read_only_right;
use crate::support::churn::get_fresh;
use crate::support::envtest::servers::SimCluster;
use crate::support::envtest::{EnvTest, User};
use crate::support::harness::k3sdoctor;
use crate::support::harness::repo_path;
use crate::support::scrape::start_serve;
use crate::support::wait::wait_for;

const SEEN: Duration = Duration::from_secs(30);

/// The static bearer token of `user` (its kubeconfig's `token:`).
fn token(env: &EnvTest, user: User) -> String {
    let kubeconfig = std::fs::read_to_string(env.kubeconfig(user)).expect("the kubeconfig");
    kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("token:"))
        .map(|t| t.trim().trim_matches('"').to_string())
        .expect("a token in the kubeconfig")
}

fn manifest(rel: &str) -> String {
    std::fs::read_to_string(repo_path(rel)).expect("the manifest")
}

#[test]
fn real_serve_answers_metrics_only_to_a_token_allowed_to_get_it() {
    let Some(env) = EnvTest::start("real_serve_answers_metrics_only_to_a_token_allowed") else {
        return;
    };
    let _cluster = SimCluster::start(&env, "k3s", "v1.29.4+k3s1", 1, &[]);
    viewer_with_every_read_only_right(&env);
    // The default, spelled out: the harness turns it off for the tests not about access.
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--metrics-auth", "kubernetes"])
            .kubeconfig(&env.kubeconfig(User::Viewer)),
    );
    let reader = token(&env, User::Repair);
    let stranger = token(&env, User::Nobody);

    // The probes' endpoints stay open.
    assert!(wait_for(SEEN, || get_fresh(address, "/readyz", None) == Some(200)));
    assert_eq!(get_fresh(address, "/healthz", None), Some(200));
    assert_eq!(get_fresh(address, "/metrics", None), Some(401));
    // serve's account cannot create TokenReviews yet: it cannot tell, and refuses (503).
    assert_eq!(get_fresh(address, "/metrics", Some(&reader)), Some(503));

    let admin = env.admin();
    admin.apply_yaml(&manifest("deploy/base/serve-auth-clusterrole.yaml"));
    admin.bind("k3sdoctor-serve-auth", User::Viewer.name());
    admin.apply_yaml(&manifest(
        "deploy/components/prometheus-operator/metrics-reader-clusterrole.yaml",
    ));
    admin.bind("k3sdoctor-metrics-reader", User::Repair.name());

    // The 503 was not cached: as soon as the bindings are seen, the reader is answered.
    assert!(
        wait_for(SEEN, || get_fresh(address, "/metrics", Some(&reader))
            == Some(200)),
        "a token bound to k3sdoctor-metrics-reader is not answered on /metrics"
    );
    assert_eq!(get_fresh(address, "/metrics", None), Some(401), "no token");
    assert_eq!(
        get_fresh(address, "/metrics", Some("not-a-token")),
        Some(401),
        "a wrong token"
    );
    assert_eq!(
        get_fresh(address, "/metrics", Some(&stranger)),
        Some(403),
        "a valid token without the nonResourceURL rule"
    );
    // The reader's role names /metrics only.
    assert_eq!(get_fresh(address, "/report", Some(&reader)), Some(403));
    assert_eq!(get_fresh(address, "/report", Some(&stranger)), Some(403));
    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
}
