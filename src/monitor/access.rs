//! Who may read `/metrics` and `/report`: a caller sends a bearer token,
//! the API server says whose it is (TokenReview) and whether that user may `get` the path
//! (SubjectAccessReview on the non-resource URL), as controller-runtime's metrics filter and
//! kube-rbac-proxy decide it. Answers are cached briefly, allowed and refused alike, so a
//! scrape every few seconds costs the API server two requests a minute, a flood of tokens
//! cannot grow the cache past [`CACHE_ENTRIES`], and reviews of tokens not seen lately are
//! rationed (`review_budget.rs`), so random tokens cannot turn into a flood of TokenReviews. `/healthz` and `/readyz` stay open: the
//! kubelet's probes send no token, and they tell only whether the process lives and has synced.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::review_budget::{self, ReviewBudget};
use crate::input::live::token_access_review::{Reviewer, Verdict};

/// `--metrics-auth kubernetes|none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsAuth {
    /// A bearer token the API server accepts, of a user allowed to `get` the path.
    Kubernetes,
    /// Anyone who reaches the port (as 0.1.0 answered).
    None,
}

impl MetricsAuth {
    pub fn label(self) -> &'static str {
        match self {
            MetricsAuth::Kubernetes => "kubernetes",
            MetricsAuth::None => "none",
        }
    }
}

/// How long an allowed answer is reused: a revoked binding takes effect within it.
pub(crate) const ALLOWED_FOR: Duration = Duration::from_secs(60);
/// How long a refusal is reused: a binding just created takes effect within it, and a caller
/// repeating a wrong token costs the API server one review per this period.
pub(crate) const REFUSED_FOR: Duration = Duration::from_secs(10);
/// At most this many tokens and paths are remembered (a few kilobytes).
pub(crate) const CACHE_ENTRIES: usize = 1024;

/// Why a request was not answered, with its one-line body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// 401.
    Unauthenticated(String),
    /// 403.
    Forbidden(String),
    /// 503: the API server could not be asked; nothing is cached.
    Unavailable(String),
    /// 429: too many unseen tokens at once (`review_budget`); nothing was asked.
    TooMany(String),
}

/// The key of a cached answer: the token's SHA-256 (the token itself is not kept) and the path.
type CacheKey = ([u8; 32], &'static str);

/// Answers of the API server, each until it expires; bounded.
pub(crate) struct ReviewCache {
    entries: HashMap<CacheKey, (Verdict, Instant)>,
    capacity: usize,
}

impl ReviewCache {
    pub(crate) fn new(capacity: usize) -> ReviewCache {
        ReviewCache {
            entries: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    pub(crate) fn get(&self, key: &CacheKey, now: Instant) -> Option<Verdict> {
        self.entries
            .get(key)
            .filter(|(_, until)| now < *until)
            .map(|(verdict, _)| verdict.clone())
    }

    /// Remembers `verdict` for as long as its kind allows; when full, expired answers go
    /// first, then the one closest to expiring.
    pub(crate) fn insert(&mut self, key: CacheKey, verdict: Verdict, now: Instant) {
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            self.entries.retain(|_, (_, until)| now < *until);
            if self.entries.len() >= self.capacity
                && let Some(soonest) = self
                    .entries
                    .iter()
                    .min_by_key(|(_, (_, until))| *until)
                    .map(|(k, _)| *k)
            {
                self.entries.remove(&soonest);
            }
        }
        let lasts = if verdict == Verdict::Allowed {
            ALLOWED_FOR
        } else {
            REFUSED_FOR
        };
        self.entries.insert(key, (verdict, now + lasts));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case).
pub(crate) fn bearer_token(authorization: Option<&str>) -> Option<&str> {
    let (scheme, token) = authorization?.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The refusal a verdict makes (none when allowed).
pub(crate) fn refusal(verdict: &Verdict, path: &str) -> Option<Refusal> {
    match verdict {
        Verdict::Allowed => None,
        Verdict::Unauthenticated => Some(Refusal::Unauthenticated(format!(
            "unauthorized: {path} needs a bearer token the API server accepts \
             (Authorization: Bearer <token>), of an account allowed to get {path}\n"
        ))),
        Verdict::Forbidden { user } => Some(Refusal::Forbidden(format!(
            "forbidden: user {user:?} may not get {path}; bind it to a ClusterRole with \
             nonResourceURLs [{path}] and verbs [get] (docs/rbac.md)\n"
        ))),
    }
}

/// serve's access check, in the mode `--metrics-auth` chose.
pub(crate) struct Access {
    mode: MetricsAuth,
    /// Set once serve has connected to the API server.
    reviewer: OnceLock<Reviewer>,
    cache: Mutex<ReviewCache>,
    budget: Mutex<ReviewBudget>,
    /// Whether the last review failed: a failure is logged once, not at every scrape.
    failing: AtomicBool,
}

impl Access {
    pub(crate) fn new(mode: MetricsAuth) -> Access {
        Access {
            mode,
            reviewer: OnceLock::new(),
            cache: Mutex::new(ReviewCache::new(CACHE_ENTRIES)),
            budget: Mutex::new(ReviewBudget::new(Instant::now(), CACHE_ENTRIES)),
            failing: AtomicBool::new(false),
        }
    }

    pub(crate) fn mode(&self) -> MetricsAuth {
        self.mode
    }

    /// From now on tokens are reviewed through `reviewer`.
    pub(crate) fn connected(&self, reviewer: Reviewer) {
        let _ = self.reviewer.set(reviewer);
    }

    /// Whether the sender of `authorization` may `get` `path`.
    pub(crate) async fn check(
        &self,
        authorization: Option<&str>,
        path: &'static str,
    ) -> Result<(), Refusal> {
        if self.mode == MetricsAuth::None {
            return Ok(());
        }
        let Some(token) = bearer_token(authorization) else {
            return refusal(&Verdict::Unauthenticated, path).map_or(Ok(()), Err);
        };
        let key: CacheKey = (Sha256::digest(token.as_bytes()).into(), path);
        let cached = self.cache().get(&key, Instant::now());
        let verdict = match cached {
            Some(verdict) => verdict,
            None => {
                let Some(reviewer) = self.reviewer.get() else {
                    return Err(Refusal::Unavailable(format!(
                        "unavailable: cannot check the bearer token for {path} yet, serve is \
                         still connecting to the API server; try again\n"
                    )));
                };
                if !self.budget().may_review(&key.0, Instant::now()) {
                    return Err(Refusal::TooMany(format!(
                        "too many requests: more unknown bearer tokens than serve asks the API \
                         server about ({} a second); try again in a second\n",
                        review_budget::PER_SECOND
                    )));
                }
                let verdict = match reviewer.review(token, path).await {
                    Ok(verdict) => verdict,
                    Err(why) => {
                        if !self.failing.swap(true, Ordering::Relaxed) {
                            tracing::warn!(
                                "cannot check the bearer tokens sent to /metrics and /report: \
                                 {why}; they answer 503 until it can"
                            );
                        }
                        return Err(Refusal::Unavailable(format!(
                            "unavailable: cannot check the bearer token for {path}: {why}\n"
                        )));
                    }
                };
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!("bearer tokens are checked again");
                }
                if verdict == Verdict::Allowed {
                    self.budget().vouch(key.0, Instant::now());
                }
                self.cache().insert(key, verdict.clone(), Instant::now());
                verdict
            }
        };
        refusal(&verdict, path).map_or(Ok(()), Err)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, ReviewCache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn budget(&self) -> std::sync::MutexGuard<'_, ReviewBudget> {
        self.budget.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> CacheKey {
        ([n; 32], "/metrics")
    }

    #[test]
    fn the_token_is_taken_from_a_bearer_header_only() {
        assert_eq!(bearer_token(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(Some("bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(Some("Basic abc")), None);
        assert_eq!(bearer_token(Some("Bearer ")), None);
        assert_eq!(bearer_token(Some("Bearer")), None);
        assert_eq!(bearer_token(None), None);
    }

    #[test]
    fn allowed_answers_last_a_minute_and_refusals_ten_seconds() {
        let now = Instant::now();
        let mut cache = ReviewCache::new(8);
        cache.insert(key(1), Verdict::Allowed, now);
        cache.insert(key(2), Verdict::Unauthenticated, now);
        let later = now + Duration::from_secs(11);
        assert_eq!(cache.get(&key(1), later), Some(Verdict::Allowed));
        assert_eq!(cache.get(&key(2), later), None, "a refusal is asked again");
        assert_eq!(cache.get(&key(1), now + Duration::from_secs(61)), None);
        // The same token for another path is another question.
        assert_eq!(cache.get(&([1; 32], "/report"), now), None);
    }

    #[test]
    fn the_cache_never_grows_past_its_bound() {
        let now = Instant::now();
        let mut cache = ReviewCache::new(4);
        cache.insert(key(0), Verdict::Allowed, now);
        for n in 1..100 {
            cache.insert(
                key(n),
                Verdict::Forbidden { user: "x".into() },
                now + Duration::from_millis(u64::from(n)),
            );
            assert!(cache.len() <= 4);
        }
        // The allowed answer expires last, so the refusals made room among themselves.
        assert_eq!(cache.get(&key(0), now), Some(Verdict::Allowed));
        assert!(
            cache
                .get(&key(99), now + Duration::from_millis(99))
                .is_some()
        );
    }

    #[test]
    fn refusals_are_one_line_and_say_what_to_do() {
        for verdict in [
            Verdict::Unauthenticated,
            Verdict::Forbidden {
                user: "system:serviceaccount:monitoring:prometheus".into(),
            },
        ] {
            let (Some(Refusal::Unauthenticated(body)) | Some(Refusal::Forbidden(body))) =
                refusal(&verdict, "/metrics")
            else {
                panic!("{verdict:?} is refused");
            };
            assert_eq!(body.lines().count(), 1, "{body}");
            assert!(body.ends_with('\n') && body.contains("/metrics"), "{body}");
        }
        assert_eq!(refusal(&Verdict::Allowed, "/metrics"), None);
    }

    #[test]
    fn without_auth_everyone_is_answered_and_with_it_no_token_is_refused() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let open = Access::new(MetricsAuth::None);
        assert_eq!(runtime.block_on(open.check(None, "/metrics")), Ok(()));
        let closed = Access::new(MetricsAuth::Kubernetes);
        assert!(matches!(
            runtime.block_on(closed.check(None, "/metrics")),
            Err(Refusal::Unauthenticated(_))
        ));
        // Not yet connected: a token cannot be checked, and that is not cached.
        assert!(matches!(
            runtime.block_on(closed.check(Some("Bearer t"), "/report")),
            Err(Refusal::Unavailable(_))
        ));
    }
}
