//! The regular expressions k3sdoctor writes into its own source. Each is a literal, so the one
//! way it can fail to compile is a typo in this repository, never anything a user passes; the
//! tests of every module that holds one run it. A pattern from the command line
//! (`--rancher-clusters REGEX`, context patterns) is parsed where it arrives, with an error
//! that names the flag.

use regex::Regex;

/// `pattern`, a literal of this source, compiled. Its invariant: the literal is valid regex
/// syntax (checked by the holding module's tests, which all go through it).
pub(crate) fn const_regex(pattern: &'static str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("k3sdoctor's own pattern {pattern:?}: {e}"))
}
