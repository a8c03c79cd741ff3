//! `serve --heal dry-run|on`: the I/O around the pure heal policy (`heal::heal_policy`)
//! and gates (`heal::heal_gates`). Runs as its own task so that a move and its
//! verification never hold up the watches and the metrics. Each evaluation the serve loop
//! sends (the lock state from memory and the API server's time) reads the pause annotation,
//! judges, and publishes the decision; a move re-reads everything and re-checks every gate
//! right before the write, then goes through `leases follow --fix`'s own write
//! (`follow_write::apply`: preconditioned on the judged resourceVersions) and verification.

mod guardrail_keeper;
mod heal_leader;

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use tokio::sync::watch;

use crate::distro::{Distro, LOCK_NAMESPACE};
use crate::events::event_apply::record_event;
use crate::events::repair_event::EventReason;
use crate::follow::follow_event::lock_move_event;
use crate::heal::guardrail_record::friendly;
use crate::heal::heal_gates::{
    Blocked, Gate, KURED_LOCK_ANNOTATION, Outside, PAUSE_ANNOTATION, SplitCandidate, heal_candidate,
};
use crate::heal::heal_metrics::HealOutcome;
use crate::heal::heal_policy::{Decision, HealMode, HealPolicy, HealSettings};
use crate::input::connect::Connection;
use crate::model::cluster_state::ClusterState;
use crate::monitor::Exporter;
use crate::settings::Judging;

use self::guardrail_keeper::{GuardrailKeeper, GuardrailStore, StoreError};
use self::heal_leader::{Election, elect, heal_identity, heal_lease_namespace};

/// Who asks, in the Events' notes.
pub(super) const ASKED_BY: &str = "serve --heal";

/// kured's DaemonSet, where its lock annotation lives (its Helm chart's default name).
const KURED_DAEMONSET: &str = "kured";

/// One evaluation of the serve loop: the lock state from memory, its distro, the API
/// server's time.
#[derive(Clone)]
pub(super) struct HealInput {
    pub state: ClusterState,
    pub distro: Distro,
    pub now: Timestamp,
}

pub(super) struct Healer {
    pub conn: Arc<Connection>,
    /// `--now` never applies to serve; `--distro` does.
    pub judging: Judging,
    pub exporter: Arc<Exporter>,
    pub policy: HealPolicy,
    /// Where this replica stands in the heal Lease's election (`heal_leader`).
    pub(super) election: watch::Receiver<Election>,
    /// The cooldown and failed moves kept on the heal Lease (`heal_guardrails`).
    guardrails: GuardrailKeeper,
    /// The last decision logged, so a steady state is logged once.
    pub(super) logged: Option<String>,
}

impl Healer {
    /// Why this replica may not heal now (`GuardrailKeeper::take_part`).
    async fn take_part(&mut self, now: Timestamp, before_a_heal: bool) -> Option<Blocked> {
        let election = self.election.borrow().clone();
        self.guardrails
            .take_part(&election, &mut self.policy, now, before_a_heal)
            .await
    }

    /// Writes the policy's guardrails to the heal Lease when they changed.
    pub(super) async fn record_guardrails(&mut self) -> Result<(), StoreError> {
        self.guardrails.record(&self.policy).await
    }

    pub(super) fn new(
        conn: Arc<Connection>,
        judging: Judging,
        exporter: Arc<Exporter>,
        settings: HealSettings,
        election: watch::Receiver<Election>,
        store: GuardrailStore,
    ) -> Healer {
        Healer {
            conn,
            judging,
            exporter,
            policy: HealPolicy::new(settings),
            election,
            guardrails: GuardrailKeeper::new(store),
            logged: None,
        }
    }

    /// Runs until the sender is dropped (serve stopping); a move under way is finished first.
    pub(super) async fn run(mut self, mut inputs: watch::Receiver<Option<HealInput>>) {
        while inputs.changed().await.is_ok() {
            let input = inputs.borrow_and_update().clone();
            if let Some(input) = input {
                self.evaluate(input).await;
            }
        }
    }

    async fn evaluate(&mut self, input: HealInput) {
        let paused = self.read_pause().await;
        let mut outside = Outside {
            paused: paused.clone(),
            reboot_lock: None,
        };
        let mut candidate = heal_candidate(&input.state, input.distro, input.now, &outside);
        if candidate.is_some() {
            outside.reboot_lock = self.read_reboot_lock().await;
            candidate = heal_candidate(&input.state, input.distro, input.now, &outside);
        }
        let held_back = self.take_part(input.now, candidate.is_some()).await;
        let decision = self
            .policy
            .evaluate(input.now, candidate.as_ref(), held_back);
        if self.guardrails.read_back() {
            // A recurrence doubles the cooldown, a split's end forgets failed moves: recorded.
            let _ = self.record_guardrails().await;
        }
        let metrics = self.exporter.metrics.heal.as_ref();
        if let Some(m) = metrics {
            m.set_paused(paused.is_some());
            let gates: Vec<Gate> = match &decision {
                Decision::Blocked(b) => b.iter().map(|b| b.gate.clone()).collect(),
                _ => Vec::new(),
            };
            m.set_blocked(&gates);
        }
        self.publish(&decision, candidate.as_ref());
        self.log_decision(&decision, candidate.as_ref());
        let Some(candidate) = candidate else { return };
        match decision {
            Decision::WouldMove { record: true } => {
                if let Some(plan) = &candidate.plan {
                    tracing::warn!(
                        lock = %candidate.lock,
                        from = %candidate.from,
                        to = %candidate.to,
                        "heal dry-run: would move {} from {} to {} now (WouldMoveLock Event recorded)",
                        candidate.lock,
                        candidate.from,
                        candidate.to
                    );
                    let event = lock_move_event(
                        EventReason::WouldMoveLock,
                        plan,
                        &[],
                        "Dry run (serve --heal dry-run): nothing was written.",
                        ASKED_BY,
                    );
                    self.record(&event, input.now).await;
                    self.count(HealOutcome::WouldMove);
                }
            }
            Decision::Move => self.heal(&candidate).await,
            _ => {}
        }
    }

    /// The pause annotation; when it cannot be read, heals stay paused (it may be there).
    pub(super) async fn read_pause(&self) -> Option<String> {
        read_heal_pause(&self.conn).await.unwrap_or_else(|e| {
            // In one line: kube's own Display of an API error appends its debug form.
            let read = crate::input::ReadError::from_kube(
                &e,
                "get namespace kube-system",
                &self.conn.server,
            );
            Some(format!(
                "(unknown: the annotation cannot be read: {})",
                read.message
            ))
        })
    }

    /// kured's lock, when its DaemonSet exists and holds it; a DaemonSet that cannot be read
    /// (403) counts as no kured, which the log says once per read error kind.
    pub(super) async fn read_reboot_lock(&self) -> Option<String> {
        let api: Api<DaemonSet> = Api::namespaced(self.conn.client.clone(), LOCK_NAMESPACE);
        match api.get_metadata_opt(KURED_DAEMONSET).await {
            Ok(Some(ds)) => ds
                .metadata
                .annotations
                .and_then(|a| a.get(KURED_LOCK_ANNOTATION).cloned())
                .filter(|v| !v.is_empty()),
            Ok(None) => None,
            Err(e) => {
                tracing::debug!("cannot read DaemonSet kube-system/{KURED_DAEMONSET}: {e}");
                None
            }
        }
    }

    pub(super) fn publish(&self, decision: &Decision, candidate: Option<&SplitCandidate>) {
        let settings = self.policy.settings;
        let (state, blocked) = match decision {
            Decision::NoSplit => ("no-split", Vec::new()),
            Decision::Blocked(b) => ("blocked", b.clone()),
            Decision::Waiting { .. } => ("waiting", Vec::new()),
            Decision::WouldMove { .. } => ("would-move", Vec::new()),
            Decision::Move => ("moving", Vec::new()),
        };
        let episode = self.policy.episode.as_ref();
        let heal = serde_json::json!({
            "mode": settings.mode.label(),
            "healAfter": friendly(settings.heal_after),
            "cooldown": friendly(self.policy.cooldown),
            "state": state,
            "split": candidate.map(|c| serde_json::json!({"lock": c.lock, "from": c.from, "to": c.to})),
            "splitSince": episode.map(|e| e.since.to_string()),
            "evaluations": episode.map(|e| e.evaluations),
            "blocked": blocked.iter().map(|b| serde_json::json!({"reason": b.gate.label(), "message": b.why})).collect::<Vec<_>>(),
            "lastHeal": self.policy.last_heal.map(|t| t.to_string()),
        });
        self.exporter.publish_heal(heal);
    }

    fn log_decision(&mut self, decision: &Decision, candidate: Option<&SplitCandidate>) {
        let key = match decision {
            Decision::Blocked(b) => format!(
                "blocked {}",
                b.iter()
                    .map(|b| b.gate.label())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Decision::Waiting { since, .. } => format!("waiting {since}"),
            other => format!("{other:?}"),
        };
        if self.logged.as_ref() == Some(&key) {
            return;
        }
        self.logged = Some(key);
        let Some(c) = candidate else {
            return;
        };
        match decision {
            Decision::Blocked(blocked) => {
                for Blocked { gate, why } in blocked {
                    tracing::warn!(
                        reason = gate.label(),
                        lock = %c.lock,
                        "heal of {} ({} -> {}) blocked: {}: {why}",
                        c.lock,
                        c.from,
                        c.to,
                        gate.label()
                    );
                }
            }
            Decision::Waiting { since, .. } => tracing::info!(
                lock = %c.lock,
                "split of {} ({} -> {}) seen since {since}; healed after {} if it lasts and every gate holds",
                c.lock,
                c.from,
                c.to,
                friendly(self.policy.settings.heal_after)
            ),
            _ => {}
        }
    }

    pub(super) fn count(&self, outcome: HealOutcome) {
        if let Some(m) = &self.exporter.metrics.heal {
            m.count(outcome);
        }
    }

    pub(super) async fn record(
        &self,
        event: &crate::events::repair_event::RepairEvent,
        now: Timestamp,
    ) {
        if let Err(line) = record_event(&self.conn, event, now).await {
            tracing::warn!("{line}");
        }
    }
}

/// How long a stopping serve waits for a heal under way.
pub(super) const HEAL_STOP_LIMIT: Duration = Duration::from_secs(20);

pub(super) type HealStart = (
    Option<tokio::sync::watch::Sender<Option<HealInput>>>,
    Option<tokio::task::JoinHandle<()>>,
);

/// The heal task, when `--heal` is dry-run or on.
pub(super) fn start_healer(
    opts: &crate::settings::ServeOptions,
    judging: Judging,
    conn: &Arc<crate::input::connect::Connection>,
    exporter: &Arc<Exporter>,
) -> HealStart {
    if opts.heal == HealMode::Off {
        return (None, None);
    }
    let settings = HealSettings {
        mode: opts.heal,
        heal_after: jiff::SignedDuration::try_from(opts.heal_after)
            .unwrap_or(jiff::SignedDuration::MAX),
        cooldown: jiff::SignedDuration::try_from(opts.heal_cooldown)
            .unwrap_or(jiff::SignedDuration::MAX),
    };
    tracing::info!(
        mode = opts.heal.label(),
        "heal {}: a split on an affected version lasting {} is {} when every gate holds; pause with: kubectl annotate namespace kube-system {}=REASON",
        opts.heal.label(),
        friendly(settings.heal_after),
        if opts.heal == HealMode::On {
            "moved"
        } else {
            "reported as WouldMoveLock"
        },
        crate::heal::heal_gates::PAUSE_ANNOTATION
    );
    let (tx, rx) = tokio::sync::watch::channel(None);
    let namespace = heal_lease_namespace();
    let identity = heal_identity();
    let (state, election) = elect(conn, namespace.clone(), identity.clone());
    let store = GuardrailStore {
        conn: conn.clone(),
        namespace,
        identity,
    };
    let healer = Healer::new(
        conn.clone(),
        judging,
        exporter.clone(),
        settings,
        state,
        store,
    );
    let task = tokio::spawn(async move {
        healer.run(rx).await;
        // The healer (and its receiver) is gone: the election releases the Lease.
        let _ = election.await;
    });
    (Some(tx), Some(task))
}

/// The pause annotation on Namespace kube-system, as `serve --heal` and `leases follow` read it.
pub(super) async fn read_heal_pause(conn: &Connection) -> Result<Option<String>, kube::Error> {
    let api: Api<Namespace> = Api::all(conn.client.clone());
    match api.get(LOCK_NAMESPACE).await {
        Ok(ns) => Ok(ns
            .metadata
            .annotations
            .and_then(|a| a.get(PAUSE_ANNOTATION).cloned())),
        // No kube-system at all holds no annotation (only a test server lacks it).
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
        Err(e) => Err(e),
    }
}
