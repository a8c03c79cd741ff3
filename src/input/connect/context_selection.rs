//! Which kubeconfig contexts a fleet run reads: `--all-contexts`, `--contexts REGEX` and
//! repeated `--context NAME`. Pure: the kubeconfig is already read.

use regex::Regex;

use crate::input::ReadError;

/// What the user asked for. `names` are `--context` values; `pattern` is `--contexts`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ContextSelection<'a> {
    pub all: bool,
    pub pattern: Option<&'a Regex>,
    pub names: &'a [String],
}

/// The selected contexts in kubeconfig order (the order `kubectl config get-contexts`
/// shows), each once. A named context that does not exist, or a pattern that matches
/// nothing, is an error naming the contexts that do exist: an empty fleet is a typo, not
/// a healthy result.
pub(crate) fn select_contexts(
    available: &[&str],
    selection: ContextSelection<'_>,
    origin: &str,
) -> Result<Vec<String>, ReadError> {
    let known = || {
        if available.is_empty() {
            "it has no contexts".to_string()
        } else {
            format!("it has {}", available.join(", "))
        }
    };
    if let Some(missing) = selection
        .names
        .iter()
        .find(|n| !available.contains(&n.as_str()))
    {
        return Err(ReadError::new(format!(
            "context {missing:?} is not in kubeconfig {origin} ({}); {}",
            known(),
            pick_hint(missing, available)
        )));
    }
    if let Some(pattern) = selection.pattern
        && !available.iter().any(|c| pattern.is_match(c))
    {
        return Err(ReadError::new(format!(
            "--contexts {:?} matches no context in kubeconfig {origin} ({}); the pattern is a regular \
             expression matched anywhere in the name, e.g. '^prod-'",
            pattern.as_str(),
            known()
        )));
    }
    if selection.all && available.is_empty() {
        return Err(ReadError::new(format!(
            "--all-contexts: kubeconfig {origin} has no contexts"
        )));
    }
    Ok(available
        .iter()
        .filter(|c| {
            selection.all
                || selection.names.iter().any(|n| n == *c)
                || selection.pattern.is_some_and(|p| p.is_match(c))
        })
        .map(|c| c.to_string())
        .collect())
}

/// What to do about a `--context` that names no context: pick one, or, when the name looks
/// like a shell glob (`viewer*`), use the flag that selects by pattern.
pub(crate) fn pick_hint(wanted: &str, available: &[&str]) -> String {
    let Some(pattern) = glob_as_regex(wanted) else {
        return "pick one with --context".to_string();
    };
    let matching: Vec<&str> = Regex::new(&pattern)
        .map(|re| {
            available
                .iter()
                .copied()
                .filter(|c| re.is_match(c))
                .collect()
        })
        .unwrap_or_default();
    let matches = match matching.as_slice() {
        [] => String::new(),
        names => format!("; it would read {}", names.join(", ")),
    };
    format!(
        "--context takes one exact name; to read every context that matches a pattern, use \
         --contexts '{pattern}' (a regular expression{matches})"
    )
}

/// `viewer*` as the regular expression `--contexts` takes (`^viewer`); `None` for a name
/// without glob characters.
fn glob_as_regex(glob: &str) -> Option<String> {
    if !glob.contains(['*', '?', '[']) {
        return None;
    }
    let mut re = String::from("^");
    for c in glob.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '[' | ']' => re.push(c),
            // Only what is special to a regex; `-` is not, outside a class.
            c if r".+()|{}^$\".contains(c) => {
                re.push('\\');
                re.push(c);
            }
            c => re.push(c),
        }
    }
    re.push('$');
    // `^viewer.*$` reads better as `^viewer`.
    let re = re.strip_suffix(".*$").map(str::to_string).unwrap_or(re);
    Some(re)
}

#[cfg(test)]
mod tests {
    use super::*;

    const AVAILABLE: [&str; 4] = ["prod-eu", "prod-us", "staging", "lab-prod"];

    fn select(all: bool, pattern: Option<&str>, names: &[&str]) -> Result<Vec<String>, String> {
        let pattern = pattern.map(|p| Regex::new(p).unwrap());
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        select_contexts(
            &AVAILABLE,
            ContextSelection {
                all,
                pattern: pattern.as_ref(),
                names: &names,
            },
            "kc.yaml",
        )
        .map_err(|e| e.message)
    }

    #[test]
    fn all_contexts_in_kubeconfig_order() {
        assert_eq!(select(true, None, &[]).unwrap(), AVAILABLE);
    }

    #[test]
    fn a_pattern_matches_anywhere_unless_anchored() {
        assert_eq!(
            select(false, Some("prod"), &[]).unwrap(),
            ["prod-eu", "prod-us", "lab-prod"]
        );
        assert_eq!(
            select(false, Some("^prod-"), &[]).unwrap(),
            ["prod-eu", "prod-us"]
        );
    }

    #[test]
    fn names_and_pattern_add_up_each_context_once_in_kubeconfig_order() {
        assert_eq!(
            select(false, Some("^prod-us$"), &["staging", "prod-us", "prod-eu"]).unwrap(),
            ["prod-eu", "prod-us", "staging"]
        );
    }

    #[test]
    fn a_selection_that_names_nothing_real_is_an_error_listing_the_contexts() {
        assert_eq!(
            select(false, Some("^dev"), &[]).unwrap_err(),
            "--contexts \"^dev\" matches no context in kubeconfig kc.yaml (it has prod-eu, prod-us, staging, \
             lab-prod); the pattern is a regular expression matched anywhere in the name, e.g. '^prod-'"
        );
        assert_eq!(
            select(false, None, &["prod-eu", "nope"]).unwrap_err(),
            "context \"nope\" is not in kubeconfig kc.yaml (it has prod-eu, prod-us, staging, lab-prod); \
             pick one with --context"
        );
    }

    #[test]
    fn a_glob_in_context_points_to_contexts() {
        let e = select(false, None, &["prod*"]).unwrap_err();
        assert!(
            e.contains(
                "use --contexts '^prod' (a regular expression; it would read prod-eu, prod-us)"
            ),
            "{e}"
        );
        let e = select(false, None, &["prod-e?"]).unwrap_err();
        assert!(e.contains("--contexts '^prod-e.$'"), "{e}");
        let e = select(false, None, &["nope"]).unwrap_err();
        assert!(e.ends_with("pick one with --context"), "{e}");
    }
}
