//! serve's access checks against the fake API server, which answers TokenReviews: random
//! tokens cost a bounded number of reviews, and an account without the rights to review says
//! so at start-up in one line, and each refused scrape gets one plain line, never a debug dump.
//! The allowed path on a real API server: tests/real_apiserver/serve_access.rs.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::support::fake_api::{FakeApi, Role};
use crate::support::harness::k3sdoctor;
use crate::support::objects::fresh_cluster;
use crate::support::scrape::start_serve;
use crate::support::wait::wait_for;

const SEEN: Duration = Duration::from_secs(30);

/// One GET on a connection of its own: the status and the body.
fn get(address: SocketAddr, path: &str, token: Option<&str>) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(address).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: k3sdoctor\r\nConnection: close\r\n{auth}\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

fn token_reviews(fake: &FakeApi) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/tokenreviews"))
        .count()
}

#[test]
fn random_tokens_cost_a_bounded_number_of_token_reviews() {
    let fake = fresh_cluster(&["s1"]);
    let (serve, address) = start_serve(
        k3sdoctor(["serve", "--metrics-auth", "kubernetes"]).cluster(&fake, Role::Admin),
    );
    // Connected: a token is reviewed (and refused) rather than "still connecting".
    assert!(wait_for(SEEN, || get(address, "/metrics", Some("warm-up"))
        .is_some_and(|(status, _)| status == 401)));
    let before = token_reviews(&fake);
    let started = Instant::now();
    let mut statuses = std::collections::BTreeMap::new();
    for n in 0..300 {
        let (status, body) = get(address, "/metrics", Some(&format!("random-{n}-x9"))).unwrap();
        assert_eq!(body.lines().count(), 1, "{body}");
        *statuses.entry(status).or_insert(0) += 1;
    }
    let took = started.elapsed().as_secs_f64();
    let reviews = token_reviews(&fake) - before;
    // A burst of 10, then 5 a second (and one for the second being counted).
    let bound = 10 + (5.0 * took).ceil() as usize + 5;
    assert!(
        reviews <= bound,
        "{reviews} TokenReviews for 300 random tokens in {took:.1} s (at most {bound})"
    );
    assert!(statuses.get(&429).is_some_and(|n| *n > 0), "{statuses:?}");
    assert_eq!(
        statuses.keys().copied().collect::<Vec<u16>>(),
        [401, 429],
        "only refused or told to wait: {statuses:?}"
    );
    serve.signal_and_wait(libc::SIGTERM).code(0);
}

#[test]
fn serve_without_the_review_rights_says_so_at_start_and_in_one_plain_line() {
    let fake = fresh_cluster(&["s1"]);
    let (mut serve, address) = start_serve(
        k3sdoctor(["serve", "--metrics-auth", "kubernetes"]).cluster(&fake, Role::ReadOnly),
    );
    let warning = serve
        .stderr_line_matching(SEEN, |l| l.contains("WARN") && l.contains("may not create"))
        .expect("the missing rights are logged at start-up");
    assert!(
        warning.contains(
            "serve's account may not create tokenreviews.authentication.k8s.io or \
             subjectaccessreviews.authorization.k8s.io"
        ) && warning.contains("`k3sdoctor rbac serve`"),
        "{warning}"
    );
    let (status, body) = get(address, "/metrics", Some("viewer-token")).unwrap();
    assert_eq!(status, 503, "{body}");
    assert_eq!(body.lines().count(), 1, "{body}");
    for dump in ["ErrorResponse", "Status {", "ApiError", "reason:"] {
        assert!(!body.contains(dump), "a debug dump: {body}");
    }
    assert!(
        body.starts_with("unavailable: cannot check the bearer token for /metrics: serve's account may not create tokenreviews.authentication.k8s.io (403 Forbidden)"),
        "{body}"
    );
    let (status, body) = get(address, "/report", None).unwrap();
    assert_eq!((status, body.lines().count()), (401, 1), "{body}");
    let out = serve.signal_and_wait(libc::SIGTERM);
    out.code(0);
    // The start-up line keeps its words: only credentials are redacted.
    assert!(
        out.stderr
            .contains("/metrics and /report answer bearer tokens allowed to get them"),
        "{}",
        out.stderr
    );
    // The failed review is logged once, however many scrapes it refused.
    let logged = out
        .stderr
        .lines()
        .filter(|l| l.contains("cannot check the bearer tokens sent to /metrics and /report"))
        .count();
    assert_eq!(logged, 1, "{}", out.stderr);
}
