//! How long system-upgrade-controller lets one upgrade Job run, and who said so: the Job's own
//! `activeDeadlineSeconds` while it exists, else the Plan's `jobActiveDeadlineSecs` (SUC
//! v0.12.0: unset or < 0 takes the controller's default, 0 means none), else the controller's
//! `SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS` from its `default-controller-env` ConfigMap,
//! else the built-in 600 s (rancher/system-upgrade-controller `pkg/upgrade/job/job.go`).

use jiff::SignedDuration;

use crate::model::upgrade_job::UpgradeJobFacts;
use crate::model::upgrade_plan::PlanFacts;
use crate::model::upgrade_plans::{CONTROLLER_ENV, DEADLINE_KEY, UpgradePlans};

/// SUC's built-in Job deadline, when nothing sets one.
const BUILT_IN_SECS: i64 = 600;

/// Where a deadline came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DeadlineFrom {
    Job,
    Plan,
    /// `default-controller-env` in this namespace.
    ControllerEnv(String),
    /// The built-in 600 s; whether the ConfigMap was read (absent) or not (unknown).
    BuiltIn {
        env_read: bool,
    },
}

/// A Job's deadline: `None` seconds when the Plan turned it off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Deadline {
    pub secs: Option<i64>,
    pub from: DeadlineFrom,
}

impl Deadline {
    pub(crate) fn of(
        job: Option<&UpgradeJobFacts>,
        plan: &PlanFacts,
        read: &UpgradePlans,
    ) -> Deadline {
        if let Some(secs) = job.and_then(|j| j.active_deadline_secs) {
            return Deadline {
                secs: Some(secs),
                from: DeadlineFrom::Job,
            };
        }
        match plan.job_deadline_secs {
            Some(0) => {
                return Deadline {
                    secs: None,
                    from: DeadlineFrom::Plan,
                };
            }
            Some(secs) if secs > 0 => {
                return Deadline {
                    secs: Some(secs),
                    from: DeadlineFrom::Plan,
                };
            }
            _ => {}
        }
        let env = read.env_in(&plan.namespace);
        let configured = env
            .and_then(|e| e.job_deadline.as_deref())
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|secs| *secs > 0);
        match configured {
            Some(secs) => Deadline {
                secs: Some(secs),
                from: DeadlineFrom::ControllerEnv(plan.namespace.clone()),
            },
            None => Deadline {
                secs: Some(BUILT_IN_SECS),
                from: DeadlineFrom::BuiltIn {
                    env_read: read.controller_env.is_some(),
                },
            },
        }
    }

    pub(crate) fn duration(&self) -> Option<SignedDuration> {
        self.secs.map(SignedDuration::from_secs)
    }

    /// `900 s (the Job's activeDeadlineSeconds)`, as messages say it.
    pub(crate) fn describe(&self) -> String {
        let source = match &self.from {
            DeadlineFrom::Job => "the Job's activeDeadlineSeconds".to_string(),
            DeadlineFrom::Plan => "the Plan's jobActiveDeadlineSecs".to_string(),
            DeadlineFrom::ControllerEnv(ns) => format!("{DEADLINE_KEY} in {ns}/{CONTROLLER_ENV}"),
            DeadlineFrom::BuiltIn { env_read: true } => {
                format!("the controller's built-in default; {CONTROLLER_ENV} sets none")
            }
            DeadlineFrom::BuiltIn { env_read: false } => format!(
                "the controller's built-in default; {CONTROLLER_ENV} not read, and the shipped \
                 one sets 900 s"
            ),
        };
        match self.secs {
            Some(secs) => format!("{secs} s ({source})"),
            None => format!("none ({source} is 0)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::upgrade_plans::ControllerEnv;

    fn plan(deadline: Option<i64>) -> PlanFacts {
        let mut plan = PlanFacts::from_json(&serde_json::json!({
            "metadata": {"name": "server-plan", "namespace": "system-upgrade"}
        }))
        .unwrap();
        plan.job_deadline_secs = deadline;
        plan
    }

    fn read(env: Option<&str>) -> UpgradePlans {
        UpgradePlans {
            controller_env: Some(
                env.map(|v| ControllerEnv {
                    namespace: "system-upgrade".into(),
                    job_deadline: Some(v.into()),
                })
                .into_iter()
                .collect(),
            ),
            ..UpgradePlans::default()
        }
    }

    #[test]
    fn the_job_then_the_plan_then_the_configmap_then_600_s() {
        let job = UpgradeJobFacts::from_json(&serde_json::json!({
            "metadata": {"name": "j", "labels": {"upgrade.cattle.io/plan": "server-plan"}},
            "spec": {"activeDeadlineSeconds": 300}
        }))
        .unwrap()
        .unwrap();
        let from_job = Deadline::of(Some(&job), &plan(Some(1200)), &read(Some("900")));
        assert_eq!(
            from_job.describe(),
            "300 s (the Job's activeDeadlineSeconds)"
        );
        let from_plan = Deadline::of(None, &plan(Some(1200)), &read(Some("900")));
        assert_eq!(
            from_plan.describe(),
            "1200 s (the Plan's jobActiveDeadlineSecs)"
        );
        for unset in [None, Some(-1)] {
            let from_env = Deadline::of(None, &plan(unset), &read(Some("900")));
            assert_eq!(
                from_env.describe(),
                "900 s (SYSTEM_UPGRADE_JOB_ACTIVE_DEADLINE_SECONDS in system-upgrade/default-controller-env)"
            );
        }
        let built_in = Deadline::of(None, &plan(None), &read(None));
        assert_eq!(built_in.secs, Some(600));
        assert_eq!(built_in.from, DeadlineFrom::BuiltIn { env_read: true });
        let garbage = Deadline::of(None, &plan(None), &read(Some("soon")));
        assert_eq!(garbage.secs, Some(600));
        let unknown = Deadline::of(None, &plan(None), &UpgradePlans::default());
        assert!(
            unknown
                .describe()
                .contains("not read, and the shipped one sets 900 s")
        );
    }

    #[test]
    fn zero_on_the_plan_means_no_deadline() {
        let none = Deadline::of(None, &plan(Some(0)), &read(Some("900")));
        assert_eq!(none.duration(), None);
        assert_eq!(
            none.describe(),
            "none (the Plan's jobActiveDeadlineSecs is 0)"
        );
    }
}
