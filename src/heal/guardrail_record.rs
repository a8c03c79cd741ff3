//! The heal guardrails that must outlive a replica: when the last heal started or ended, the
//! cooldown in force, and the moves that failed. They live as annotations on the coordination
//! Lease `k3sdoctor-heal` (the object the replicas elect a healer with), so a restarted serve or
//! the replica that takes over after a `kill -9` reads them back instead of starting with an
//! empty memory. This file is the pure codec; `commands::serve_heal::guardrail_keeper`
//! reads and writes the Lease.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};

use crate::heal::heal_gates::SplitCandidate;

/// RFC 3339, the API server's clock: when the last heal started (while it runs) or ended.
pub(crate) const LAST_HEAL_ANNOTATION: &str = "k3sdoctor.io/heal-last";
/// The cooldown in force (`30m`, doubled on each recurrence up to `24h`).
pub(crate) const COOLDOWN_ANNOTATION: &str = "k3sdoctor.io/heal-cooldown";
/// JSON list of `{"lock","from","to"}`: moves that failed, never retried until the locks change.
pub(crate) const FAILED_ANNOTATION: &str = "k3sdoctor.io/heal-failed";

/// What the policy must not forget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Guardrails {
    pub last_heal: Option<Timestamp>,
    pub cooldown: Option<SignedDuration>,
    pub failed: BTreeSet<MovePair>,
}

impl Guardrails {
    /// Read from the Lease's annotations; a value that does not parse is an error naming the
    /// annotation (a person edited it): the heal waits rather than guess.
    pub(crate) fn from_annotations(
        annotations: &BTreeMap<String, String>,
    ) -> Result<Guardrails, String> {
        let bad = |key: &str, value: &str, why: String| {
            format!(
                "annotation {key}={value:?} does not parse ({why}); fix it or remove it \
                 (kubectl annotate lease k3sdoctor-heal {key}-)"
            )
        };
        let mut guardrails = Guardrails::default();
        if let Some(value) = annotations.get(LAST_HEAL_ANNOTATION) {
            let time = value
                .parse::<Timestamp>()
                .map_err(|e| bad(LAST_HEAL_ANNOTATION, value, e.to_string()))?;
            guardrails.last_heal = Some(time);
        }
        if let Some(value) = annotations.get(COOLDOWN_ANNOTATION) {
            let period = parse_period(value)
                .ok_or_else(|| bad(COOLDOWN_ANNOTATION, value, "not like 30m, 1h or 90s".into()))?;
            guardrails.cooldown = Some(period);
        }
        if let Some(value) = annotations.get(FAILED_ANNOTATION) {
            guardrails.failed = serde_json::from_str(value)
                .map_err(|e| bad(FAILED_ANNOTATION, value, e.to_string()))?;
        }
        Ok(guardrails)
    }

    /// Written into `annotations`: set, or removed when there is nothing to say.
    pub(crate) fn write_to(&self, annotations: &mut BTreeMap<String, String>) {
        let mut set = |key: &str, value: Option<String>| match value {
            Some(value) => {
                annotations.insert(key.to_string(), value);
            }
            None => {
                annotations.remove(key);
            }
        };
        set(LAST_HEAL_ANNOTATION, self.last_heal.map(|t| t.to_string()));
        set(COOLDOWN_ANNOTATION, self.cooldown.map(friendly));
        set(
            FAILED_ANNOTATION,
            (!self.failed.is_empty())
                .then(|| serde_json::to_string(&self.failed).unwrap_or_default()),
        );
    }
}

/// `30m`, `1h`, `90s` (what [`friendly`] writes).
fn parse_period(value: &str) -> Option<SignedDuration> {
    let (number, unit) = value.split_at(value.len().checked_sub(1)?);
    let n: i64 = number.parse().ok().filter(|n| *n >= 0)?;
    match unit {
        "s" => Some(SignedDuration::from_secs(n)),
        "m" => Some(SignedDuration::from_mins(n)),
        "h" => Some(SignedDuration::from_hours(n)),
        _ => None,
    }
}

/// The move a heal makes: `lock` from `from` to `to`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub(crate) struct MovePair {
    pub lock: String,
    pub from: String,
    pub to: String,
}

impl MovePair {
    pub(crate) fn of(candidate: &SplitCandidate) -> MovePair {
        MovePair {
            lock: candidate.lock.clone(),
            from: candidate.from.clone(),
            to: candidate.to.clone(),
        }
    }
}

/// `30m`, `1h`, `24h`.
pub(crate) fn friendly(d: SignedDuration) -> String {
    let secs = d.as_secs();
    if secs % 3600 == 0 {
        format!("{}h", secs / 3600)
    } else if secs % 60 == 0 {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(to: &str) -> MovePair {
        MovePair {
            lock: "k3s".into(),
            from: "s1".into(),
            to: to.into(),
        }
    }

    #[test]
    fn guardrails_survive_a_round_trip_through_annotations() {
        let guardrails = Guardrails {
            last_heal: Some(Timestamp::from_second(1_800_000_000).unwrap()),
            cooldown: Some(SignedDuration::from_hours(2)),
            failed: [pair("s2"), pair("s3")].into(),
        };
        let mut annotations = BTreeMap::from([("other".to_string(), "kept".to_string())]);
        guardrails.write_to(&mut annotations);
        assert_eq!(annotations[COOLDOWN_ANNOTATION], "2h");
        assert_eq!(annotations[LAST_HEAL_ANNOTATION], "2027-01-15T08:00:00Z");
        assert_eq!(
            Guardrails::from_annotations(&annotations).unwrap(),
            guardrails
        );
        // Nothing to say removes the annotations, and only them.
        Guardrails::default().write_to(&mut annotations);
        assert_eq!(
            annotations,
            BTreeMap::from([("other".to_string(), "kept".to_string())])
        );
        assert_eq!(
            Guardrails::from_annotations(&annotations).unwrap(),
            Guardrails::default()
        );
    }

    #[test]
    fn an_edited_annotation_that_does_not_parse_is_named() {
        for (key, value) in [
            (LAST_HEAL_ANNOTATION, "yesterday"),
            (COOLDOWN_ANNOTATION, "soon"),
            (COOLDOWN_ANNOTATION, "-5m"),
            (FAILED_ANNOTATION, "[s1->s2]"),
        ] {
            let annotations = BTreeMap::from([(key.to_string(), value.to_string())]);
            let err = Guardrails::from_annotations(&annotations).unwrap_err();
            assert!(err.starts_with(&format!("annotation {key}=")), "{err}");
            assert!(err.contains(&format!("{key}-)")), "{err}");
        }
    }
}
