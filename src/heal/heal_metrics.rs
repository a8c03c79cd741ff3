//! The metrics of `serve --heal` (registered only when it is on or dry-run): what it did, what
//! holds it back, and whether a person paused it. No I/O.

use std::sync::atomic::AtomicU64;

use jiff::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::heal::heal_gates::Gate;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: String,
}

/// How a heal ended: the `outcome` label of `k3sdoctor_heals_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HealOutcome {
    /// Moved, the takeover verified and the `-etcd` controllers seen working.
    Moved,
    /// `dry-run`: the move it would have made (once per episode).
    WouldMove,
    /// Attempted and not completed or not verified.
    Failed,
}

impl HealOutcome {
    pub(crate) const ALL: [HealOutcome; 3] = [
        HealOutcome::Moved,
        HealOutcome::WouldMove,
        HealOutcome::Failed,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            HealOutcome::Moved => "moved",
            HealOutcome::WouldMove => "would_move",
            HealOutcome::Failed => "failed",
        }
    }
}

pub(crate) struct HealMetrics {
    heals: Family<OutcomeLabels, Counter>,
    paused: Gauge,
    blocked: Family<ReasonLabels, Gauge>,
    last: Gauge<f64, AtomicU64>,
}

impl HealMetrics {
    pub(crate) fn register(registry: &mut Registry) -> HealMetrics {
        let metrics = HealMetrics {
            heals: Family::default(),
            paused: Gauge::default(),
            blocked: Family::default(),
            last: Gauge::default(),
        };
        // Every series exists from the start, so `increase()` sees the first failure.
        for outcome in HealOutcome::ALL {
            metrics
                .heals
                .get_or_create(&OutcomeLabels {
                    outcome: outcome.label().into(),
                })
                .inc_by(0);
        }
        metrics.set_blocked(&[]);
        registry.register(
            "k3sdoctor_heals",
            "Heals by outcome: moved (verified, the -etcd controllers working again), would_move (dry-run, once per split), failed",
            metrics.heals.clone(),
        );
        registry.register(
            "k3sdoctor_heal_paused",
            "1 while Namespace kube-system carries the k3sdoctor.io/heal-paused annotation",
            metrics.paused.clone(),
        );
        registry.register(
            "k3sdoctor_heal_blocked",
            "1 for each gate that holds back the heal of the current split (0 when it does not block)",
            metrics.blocked.clone(),
        );
        registry.register(
            "k3sdoctor_heal_last_timestamp_seconds",
            "When the last heal (moved or failed) was started (Unix time on the API server's clock); 0 before the first",
            metrics.last.clone(),
        );
        metrics
    }

    pub(crate) fn count(&self, outcome: HealOutcome) {
        self.heals
            .get_or_create(&OutcomeLabels {
                outcome: outcome.label().into(),
            })
            .inc();
    }

    pub(crate) fn set_paused(&self, paused: bool) {
        self.paused.set(i64::from(paused));
    }

    /// Every gate's series: 1 for those in `blocking`, 0 for the others.
    pub(crate) fn set_blocked(&self, blocking: &[Gate]) {
        for gate in Gate::ALL {
            self.blocked
                .get_or_create(&ReasonLabels {
                    reason: gate.label().into(),
                })
                .set(i64::from(blocking.contains(&gate)));
        }
    }

    pub(crate) fn heal_started(&self, at: Timestamp) {
        self.last.set(at.as_millisecond() as f64 / 1000.0);
    }
}
