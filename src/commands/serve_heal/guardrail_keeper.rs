//! The heal guardrails (last heal, cooldown in force, failed moves) kept on the heal Lease
//! `k3sdoctor-heal` as annotations (`heal::guardrail_record`), so that "at most one heal per
//! period" and "a failed move is not retried" survive a `kill -9` and a failover.
//! The Lease is the object the replicas already share and the heal role already
//! grants; its holder is the only replica that heals, so it is the only one that writes.
//!
//! Every write is a PUT carrying the resourceVersion just read, and only while the Lease names
//! this replica: a renewal in between is a 409 (read again and written again, a few times at
//! most), a takeover by another replica is seen as a holder that is not this one, and nothing
//! is ever written blind. kube-lease-manager only patches the Lease's spec, so the annotations
//! survive its renewals.
//!
//! The Healer's side is here too: reading them back when this replica takes the Lease and
//! again before each heal (a person may have removed them to make the heal forget), and
//! writing them when the policy changes them (a heal starting or ending, a recurrence, a split
//! ending).

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};

use jiff::Timestamp;

use super::heal_leader::{Election, HEAL_LEASE};
use crate::apply::FIELD_MANAGER;
use crate::heal::guardrail_record::{Guardrails, friendly};
use crate::heal::heal_gates::{Blocked, Gate};
use crate::heal::heal_policy::HealPolicy;
use crate::input::ReadError;
use crate::input::connect::Connection;

/// Writes tried when a renewal of the Lease races the write.
const ATTEMPTS: u32 = 3;

pub(crate) struct GuardrailStore {
    pub conn: Arc<Connection>,
    pub namespace: String,
    pub identity: String,
}

/// Why the guardrails could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreError {
    /// 403 on the heal Lease: the heal role is missing.
    Denied(String),
    /// The Lease names another replica now: this one must not heal.
    NotHolder(String),
    /// Anything else (no answer, an annotation a person broke): the sentence.
    Failed(String),
}

impl StoreError {
    /// The gate it holds a heal back with.
    pub(crate) fn blocked(&self) -> Blocked {
        match self {
            StoreError::Denied(why) => Blocked {
                gate: Gate::ElectionDenied,
                why: why.clone(),
            },
            StoreError::NotHolder(why) => Blocked {
                gate: Gate::NotLeader,
                why: why.clone(),
            },
            StoreError::Failed(why) => Blocked {
                gate: Gate::GuardrailsUnknown,
                why: why.clone(),
            },
        }
    }
}

impl GuardrailStore {
    fn lease(&self) -> String {
        format!("lease {}/{HEAL_LEASE}", self.namespace)
    }

    fn api(&self) -> Api<Lease> {
        Api::namespaced(self.conn.client.clone(), &self.namespace)
    }

    fn failed(&self, verb: &str, e: &kube::Error) -> StoreError {
        let read = ReadError::from_kube(
            e,
            &format!("{verb} the {}", self.lease()),
            &self.conn.server,
        );
        if read.http_status == Some(403) {
            StoreError::Denied(format!(
                "not allowed to {verb} leases.coordination.k8s.io \"{HEAL_LEASE}\" in {} (the heal's cooldown and \
                 failed moves are kept there); not healing; bind the heal role to this account \
                 (`k3sdoctor rbac heal` prints it)",
                self.namespace
            ))
        } else {
            StoreError::Failed(format!(
                "{}; the heal's cooldown and failed moves are kept there: not healing until it answers",
                read.message
            ))
        }
    }

    /// The guardrails recorded on the Lease (none when it has none, or does not exist yet).
    pub(crate) async fn load(&self) -> Result<Guardrails, StoreError> {
        let lease = self
            .api()
            .get_opt(HEAL_LEASE)
            .await
            .map_err(|e| self.failed("get", &e))?;
        let annotations = lease
            .and_then(|l| l.metadata.annotations)
            .unwrap_or_default();
        Guardrails::from_annotations(&annotations)
            .map_err(|why| StoreError::Failed(format!("the {}: {why}", self.lease())))
    }

    /// Records `guardrails` on the Lease while it names this replica, conditioned on the
    /// resourceVersion read.
    pub(crate) async fn save(&self, guardrails: &Guardrails) -> Result<(), StoreError> {
        let api = self.api();
        let params = PostParams {
            dry_run: false,
            field_manager: Some(FIELD_MANAGER.to_string()),
        };
        for _ in 0..ATTEMPTS {
            let mut lease = api
                .get_opt(HEAL_LEASE)
                .await
                .map_err(|e| self.failed("get", &e))?
                .ok_or_else(|| StoreError::NotHolder(format!("the {} is gone", self.lease())))?;
            let holder = lease
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.clone())
                .unwrap_or_default();
            if holder != self.identity {
                return Err(StoreError::NotHolder(format!(
                    "the {} names {} now, not this replica",
                    self.lease(),
                    if holder.is_empty() { "no one" } else { &holder }
                )));
            }
            guardrails.write_to(lease.metadata.annotations.get_or_insert_default());
            // `lease` carries the resourceVersion just read: a renewal since is a 409.
            match api.replace(HEAL_LEASE, &params, &lease).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(status)) if status.code == 409 => continue,
                Err(e) => return Err(self.failed("update", &e)),
            }
        }
        Err(StoreError::Failed(format!(
            "the {} changed under each of {ATTEMPTS} writes of the heal's cooldown and failed moves",
            self.lease()
        )))
    }
}

/// The guardrails on the heal Lease as this replica knows them: read back when it takes the
/// Lease, written when the policy's change.
pub(crate) struct GuardrailKeeper {
    store: GuardrailStore,
    /// As last read from or written to the Lease; `None` until read back after this replica
    /// took the Lease (and again after each loss of it).
    recorded: Option<Guardrails>,
    /// Why the guardrails could not be read or written last time, while that lasts.
    problem: Option<StoreError>,
}

impl GuardrailKeeper {
    pub(crate) fn new(store: GuardrailStore) -> GuardrailKeeper {
        GuardrailKeeper {
            store,
            recorded: None,
            problem: None,
        }
    }

    /// Whether the guardrails were read back since this replica took the Lease.
    pub(crate) fn read_back(&self) -> bool {
        self.recorded.is_some()
    }

    /// Why this replica may not heal now, if it may not: not the heal Lease's holder, the
    /// election denied, or the guardrails not read back yet. On taking the Lease (at start or
    /// after another replica's), the guardrails recorded on it are read back into `policy`
    /// first. `before_a_heal`: a split could be healed now, so the Lease is read again and a
    /// person's edit of the guardrails is followed (`adopt_edit`).
    pub(crate) async fn take_part(
        &mut self,
        election: &Election,
        policy: &mut HealPolicy,
        now: Timestamp,
        before_a_heal: bool,
    ) -> Option<Blocked> {
        if !election.is_leader() {
            self.recorded = None;
            return election.blocked(&self.store.namespace);
        }
        if before_a_heal
            && self.problem.is_none()
            && let Some(kept) = self.recorded.clone()
            && let Some(blocked) = self.follow_an_edit(kept, policy).await
        {
            return Some(blocked);
        }
        if self.recorded.is_none() {
            match self.store.load().await {
                Ok(recorded) => {
                    tracing::info!(
                        "heal: read back from the lease {}/{}: last heal {}, cooldown {}, {} failed move(s)",
                        self.store.namespace,
                        HEAL_LEASE,
                        recorded
                            .last_heal
                            .map_or_else(|| "none".to_string(), |t| t.to_string()),
                        recorded
                            .cooldown
                            .map_or_else(|| "not recorded".to_string(), friendly),
                        recorded.failed.len()
                    );
                    policy.restore(recorded.clone(), now);
                    self.recorded = Some(recorded);
                    self.note_problem(None);
                }
                Err(e) => {
                    self.note_problem(Some(e.clone()));
                    return Some(e.blocked());
                }
            }
        }
        self.problem.as_ref().map(StoreError::blocked)
    }

    /// Reads the Lease again; guardrails that differ from those this replica last read or wrote
    /// there were edited by someone else, and replace its own. Only while the last write
    /// succeeded: otherwise the difference may be this replica's own unrecorded change.
    async fn follow_an_edit(
        &mut self,
        kept: Guardrails,
        policy: &mut HealPolicy,
    ) -> Option<Blocked> {
        match self.store.load().await {
            Ok(on_lease) if on_lease != kept => {
                tracing::info!(
                    "heal: the cooldown and failed moves on the lease {}/{} were edited: last heal {}, cooldown {}, {} failed move(s); following them",
                    self.store.namespace,
                    HEAL_LEASE,
                    on_lease
                        .last_heal
                        .map_or_else(|| "none".to_string(), |t| t.to_string()),
                    on_lease
                        .cooldown
                        .map_or_else(|| "not recorded".to_string(), friendly),
                    on_lease.failed.len()
                );
                policy.adopt_edit(on_lease.clone());
                self.recorded = Some(on_lease);
                None
            }
            Ok(_) => None,
            Err(e) => {
                self.note_problem(Some(e.clone()));
                Some(e.blocked())
            }
        }
    }

    /// Writes the policy's guardrails to the heal Lease when they changed. A heal does not
    /// start unless this succeeds.
    pub(crate) async fn record(&mut self, policy: &HealPolicy) -> Result<(), StoreError> {
        let now = policy.guardrails();
        if self.recorded.as_ref() == Some(&now) && self.problem.is_none() {
            return Ok(());
        }
        let saved = self.store.save(&now).await;
        match &saved {
            Ok(()) => self.recorded = Some(now),
            Err(StoreError::NotHolder(_)) => self.recorded = None,
            Err(_) => {}
        }
        self.note_problem(saved.clone().err());
        saved
    }

    /// Logs a guardrail problem once per kind, and its end.
    fn note_problem(&mut self, problem: Option<StoreError>) {
        if problem == self.problem {
            return;
        }
        match &problem {
            Some(e) => tracing::warn!("heal: {}", e.blocked().why),
            None => tracing::info!(
                "heal: the cooldown and failed moves are recorded on the lease {}/{} again",
                self.store.namespace,
                HEAL_LEASE
            ),
        }
        self.problem = problem;
    }
}
