//! Fault injection: answers that replace (or delay) normal handling for matching requests.

use std::time::Duration;

/// What a matching fault does.
#[derive(Clone, Debug)]
pub(crate) enum FaultAction {
    /// Answer with a real-shaped `Status` body for this code (409 Conflict / 404 NotFound name the
    /// addressed object, 500 InternalError, 503 ServiceUnavailable, 413, 422, 429 …).
    Status(u16),
    /// Answer with exactly these bytes (truncated JSON, an HTML proxy page, a text/plain 404 …).
    Raw {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
    /// Wait, then handle the request normally.
    Delay(Duration),
    /// Close the TCP connection without sending any response.
    DropConnection,
    /// Answer the list as usual (its `continue` ignored), with paging metadata that lies.
    LyingList(ListLie),
    /// Answer 200 with a JSON list that goes on for this many bytes, streamed in chunks so the
    /// fake never holds it.
    HugeBody(u64),
    /// Handle the request normally — a write is stored — and then fail to say so.
    AfterCommit(AfterCommit),
}

/// How the answer to a request that was handled (a write stored) is lost.
#[derive(Clone, Debug)]
pub(crate) enum AfterCommit {
    /// Answer with this code instead (a 500 as when etcd's reply timed out).
    Status(u16),
    /// Close the connection without an answer.
    Reset,
    /// Never answer.
    Hang,
}

/// How a list reply lies about its paging.
#[derive(Clone, Debug)]
pub(crate) enum ListLie {
    /// `remainingItemCount` set to this, no `continue`.
    RemainingItemCount(i64),
    /// The same `continue` token on every page.
    SameContinue,
    /// A new `continue` token on every page, forever.
    EndlessContinue,
}

/// A fault rule. Rules are checked in insertion order before normal handling; the first rule that
/// matches (and has uses left) applies. Requests answered by a fault are still logged.
#[derive(Clone, Debug)]
pub(crate) struct Fault {
    /// HTTP method to match (`None` = any).
    pub method: Option<String>,
    /// Substring of the request target (`path?query`) to match; `""` matches everything.
    pub path_contains: String,
    /// How many requests it applies to (`None` = forever).
    pub times: Option<usize>,
    pub action: FaultAction,
}

fn any_if_star(method: &str) -> Option<&str> {
    if method.is_empty() || method == "*" {
        None
    } else {
        Some(method)
    }
}

impl Fault {
    /// A fault for `method` (`None` = any) on targets containing `path_contains`, applying forever.
    pub(crate) fn new(method: Option<&str>, path_contains: &str, action: FaultAction) -> Fault {
        Fault {
            method: method.map(str::to_ascii_uppercase),
            path_contains: path_contains.to_string(),
            times: None,
            action,
        }
    }

    /// `Fault::status("GET", "/leases", 503)`; the shortcuts take `"*"` for any method.
    pub(crate) fn status(method: &str, path_contains: &str, code: u16) -> Fault {
        Fault::new(
            any_if_star(method),
            path_contains,
            FaultAction::Status(code),
        )
    }

    pub(crate) fn raw(
        method: &str,
        path_contains: &str,
        status: u16,
        content_type: &str,
        body: impl Into<Vec<u8>>,
    ) -> Fault {
        let action = FaultAction::Raw {
            status,
            content_type: content_type.to_string(),
            body: body.into(),
        };
        Fault::new(any_if_star(method), path_contains, action)
    }

    pub(crate) fn delay(method: &str, path_contains: &str, delay: Duration) -> Fault {
        Fault::new(
            any_if_star(method),
            path_contains,
            FaultAction::Delay(delay),
        )
    }

    pub(crate) fn drop_connection(method: &str, path_contains: &str) -> Fault {
        Fault::new(
            any_if_star(method),
            path_contains,
            FaultAction::DropConnection,
        )
    }

    pub(crate) fn lying_list(method: &str, path_contains: &str, lie: ListLie) -> Fault {
        Fault::new(
            any_if_star(method),
            path_contains,
            FaultAction::LyingList(lie),
        )
    }

    pub(crate) fn huge_body(method: &str, path_contains: &str, bytes: u64) -> Fault {
        Fault::new(
            any_if_star(method),
            path_contains,
            FaultAction::HugeBody(bytes),
        )
    }

    /// `Fault::after_commit("PUT", "/leases/k3s?", AfterCommit::Status(500))`.
    pub(crate) fn after_commit(method: &str, path_contains: &str, lost: AfterCommit) -> Fault {
        Fault::new(
            any_if_star(method),
            path_contains,
            FaultAction::AfterCommit(lost),
        )
    }

    /// Apply to the next `n` matching requests only.
    pub(crate) fn times(mut self, n: usize) -> Fault {
        self.times = Some(n);
        self
    }

    fn matches(&self, method_name: &str, target: &str) -> bool {
        self.times != Some(0)
            && self
                .method
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case(method_name))
            && target.contains(&self.path_contains)
    }
}

/// Find the first matching fault, consume one use of it and return its action.
pub(crate) fn take_matching(
    faults: &mut [Fault],
    method_name: &str,
    target: &str,
) -> Option<FaultAction> {
    let fault = faults.iter_mut().find(|f| f.matches(method_name, target))?;
    if let Some(n) = fault.times.as_mut() {
        *n -= 1;
    }
    Some(fault.action.clone())
}
