//! Removing what may be a secret from text k3sdoctor did not write (a credential plugin's
//! stderr) before it reaches an error line, a log or a fleet report. The README promises that
//! credentials never appear in output or logs, at any verbosity.

use std::sync::LazyLock;

use regex::Regex;

use crate::const_regex::const_regex;

pub(crate) const REDACTED: &str = "[redacted]";

/// Shorter pieces of a plugin's stdout are kept: words such as `exit` or `401` say what went
/// wrong and cannot carry a credential of any worth.
const SHORTEST_SECRET: usize = 6;

/// Known secrets (exec `env` values, the words of a plugin's stdout) plus patterns that look
/// like credentials whoever wrote them.
#[derive(Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

/// `Bearer <token>`, JWTs (`eyJ….….…`), and `token=…` / `password: …` style assignments.
static PATTERNS: LazyLock<[Regex; 3]> = LazyLock::new(|| {
    [
        const_regex(r"(?i)\b(bearer|basic)\s+([^\s,;]+)"),
        const_regex(r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),
        const_regex(
            r#"(?i)\b([a-z_-]*(token|secret|password|passwd|apikey|api_key|credential)[a-z_-]*)\s*([=:])\s*"?[^\s",;()\[\]]+"?"#,
        ),
    ]
});

impl Redactor {
    /// A value that must never be printed, whole or in part of a line.
    pub(crate) fn secret(&mut self, value: &str) {
        let value = value.trim();
        if value.len() >= 4 && !self.secrets.iter().any(|s| s == value) {
            self.secrets.push(value.to_string());
        }
    }

    /// Every word of `text` (split at whitespace and JSON punctuation) is a secret: a plugin's
    /// stdout is a credential, or garbage that may contain one.
    pub(crate) fn secret_text(&mut self, text: &str) {
        let trimmed = text.trim();
        if !trimmed.is_empty() {
            self.secret(trimmed);
        }
        for word in text.split(|c: char| c.is_whitespace() || "\"'{}[],:=".contains(c)) {
            if word.len() >= SHORTEST_SECRET {
                self.secret(word);
            }
        }
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        // Longest first, so a secret that contains another is replaced whole.
        let mut secrets: Vec<&String> = self.secrets.iter().collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for secret in secrets {
            out = out.replace(secret.as_str(), REDACTED);
        }
        let out = redact_patterns(&out);
        // Very long lines are cut: an error line stays one line.
        match out.char_indices().nth(200) {
            Some((at, _)) => format!("{}…", &out[..at]),
            None => out,
        }
    }
}

/// The pattern half of [`Redactor::redact`], for text with no known secrets.
pub(crate) fn redact_patterns(text: &str) -> String {
    let [bearer, jwt, assignment] = &*PATTERNS;
    let out = bearer.replace_all(text, |c: &regex::Captures| {
        match looks_like_credential(&c[2]) {
            true => format!("{} {REDACTED}", &c[1]),
            false => c[0].to_string(),
        }
    });
    let out = jwt.replace_all(&out, REDACTED);
    assignment
        .replace_all(&out, |c: &regex::Captures| {
            format!("{}{}{REDACTED}", &c[1], &c[3])
        })
        .into_owned()
}

/// Whether the word after `Bearer` or `Basic` is a credential rather than prose ("answer
/// bearer tokens", "Basic authentication"): a word of prose is letters, lower case after its
/// first, and short; a token or base64 has digits, symbols or mixed case, or is long.
fn looks_like_credential(word: &str) -> bool {
    const LONGEST_WORD: usize = 16;
    let mut letters = word.chars();
    let prose = letters.next().is_some_and(|c| c.is_ascii_alphabetic())
        && letters.all(|c| c.is_ascii_lowercase())
        && word.len() <= LONGEST_WORD;
    !prose
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secrets_and_credential_shapes_are_replaced() {
        let mut r = Redactor::default();
        r.secret("s3cr3t-vault-value");
        r.secret_text("{\"token\": \"tok-abcdef123456\"}\n");
        let line = "login failed for tok-abcdef123456 (vault s3cr3t-vault-value); \
                    Authorization: Bearer abc.def; id eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl; client_secret=hunter22";
        let out = r.redact(line);
        for leak in ["tok-abcdef", "s3cr3t", "abc.def", "eyJhbGciOi", "hunter22"] {
            assert!(!out.contains(leak), "{leak} in {out}");
        }
        assert!(out.starts_with("login failed for [redacted]"), "{out}");
        assert!(
            out.contains("Bearer [redacted]") && out.contains("client_secret=[redacted]"),
            "{out}"
        );
    }

    #[test]
    fn prose_after_bearer_or_basic_is_not_a_credential() {
        let line =
            "/metrics and /report answer bearer tokens allowed to get them; Basic authentication";
        assert_eq!(redact_patterns(line), line);
        for credential in [
            "Bearer abc.def",
            "bearer s3cr3t",
            "Basic dXNlcjpwYXNz",
            "Basic dXNlcjpwYXNzd29yZA==",
            "Bearer abcdefghijklmnopqrstuvwxyzABCDEF",
        ] {
            let out = redact_patterns(credential);
            assert!(out.ends_with(" [redacted]"), "{credential}: {out}");
        }
    }

    #[test]
    fn ordinary_words_survive() {
        let out = Redactor::default().redact("error: the server refused the login (401)");
        assert_eq!(out, "error: the server refused the login (401)");
    }
}
