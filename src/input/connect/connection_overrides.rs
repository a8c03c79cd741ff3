//! kubectl's connection flags (`--server`, `--cluster`, `--user`, `--token`,
//! `--certificate-authority`, `--insecure-skip-tls-verify`, `--as`, `--as-group`), applied to
//! the kubeconfig before it is read, as client-go's clientcmd `ConfigOverrides` are: they
//! change the chosen context's cluster and user, and `--server` alone needs no kubeconfig.
//! Pure: the kubeconfig is already read.

use std::path::PathBuf;

use kube::config::{
    AuthInfo, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};

use crate::input::ReadError;

#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub server: Option<String>,
    pub cluster: Option<String>,
    pub user: Option<String>,
    pub token: Option<String>,
    pub certificate_authority: Option<PathBuf>,
    pub insecure_skip_tls_verify: bool,
    pub impersonate: Option<String>,
    pub impersonate_groups: Vec<String>,
}

/// The names clientcmd gives what the flags make up when the kubeconfig lacks them.
const MADE_UP: &str = "k3sdoctor-flags";

impl Overrides {
    /// `--server` is enough to reach a cluster without any kubeconfig (kubectl's
    /// `--server URL --token T`).
    pub fn stands_alone(&self) -> bool {
        self.server.is_some()
    }

    /// Rewrites `kubeconfig` so that `context` (else its current context) uses what the flags
    /// say; returns the context to use. A `--cluster` or `--user` that the file does not have
    /// is an error naming those it has.
    pub fn apply(
        &self,
        kubeconfig: &mut Kubeconfig,
        context: Option<&str>,
        origin: &str,
    ) -> Result<Option<String>, ReadError> {
        let named = context
            .map(str::to_string)
            .or_else(|| kubeconfig.current_context.clone())
            .filter(|name| kubeconfig.contexts.iter().any(|c| &c.name == name));
        if !self.touches_kubeconfig() {
            return Ok(named);
        }
        let name = named.unwrap_or_else(|| MADE_UP.to_string());
        self.refuse_unknown_names(kubeconfig, origin)?;
        let (cluster_name, user_name) = self.point_context(kubeconfig, &name);
        let cluster = named_or_pushed(
            &mut kubeconfig.clusters,
            |c| c.name == cluster_name,
            || NamedCluster {
                name: cluster_name.clone(),
                cluster: None,
                other: Default::default(),
            },
        )
        .cluster
        .get_or_insert_with(Cluster::default);
        self.apply_to_cluster(cluster);
        let user = named_or_pushed(
            &mut kubeconfig.auth_infos,
            |u| u.name == user_name,
            || NamedAuthInfo {
                name: user_name.clone(),
                auth_info: None,
                other: Default::default(),
            },
        )
        .auth_info
        .get_or_insert_with(AuthInfo::default);
        self.apply_to_user(user);
        Ok(Some(name))
    }

    fn touches_kubeconfig(&self) -> bool {
        self.server.is_some()
            || self.cluster.is_some()
            || self.user.is_some()
            || self.token.is_some()
            || self.certificate_authority.is_some()
            || self.insecure_skip_tls_verify
            || self.impersonate.is_some()
    }

    /// `--cluster` and `--user` pick entries of the kubeconfig; kubectl refuses one that is
    /// not there rather than making it up.
    fn refuse_unknown_names(&self, kubeconfig: &Kubeconfig, origin: &str) -> Result<(), ReadError> {
        let clusters = kubeconfig.clusters.iter().map(|c| c.name.clone()).collect();
        let users = kubeconfig
            .auth_infos
            .iter()
            .map(|u| u.name.clone())
            .collect();
        for (wanted, names, flag) in [
            (&self.cluster, clusters, "--cluster"),
            (&self.user, users, "--user"),
        ] {
            let names: Vec<String> = names;
            if let Some(wanted) = wanted
                && !names.contains(wanted)
            {
                let known = if names.is_empty() {
                    "it has none".to_string()
                } else {
                    format!("it has {}", names.join(", "))
                };
                let what = &flag[2..];
                return Err(ReadError::new(format!(
                    "{what} {wanted:?} is not in kubeconfig {origin} ({known}); pick one with {flag}"
                )));
            }
        }
        Ok(())
    }

    /// The context `name` (made up when the kubeconfig has none), pointed at `--cluster` and
    /// `--user`: the names of the cluster and user entries the other flags then change.
    fn point_context(&self, kubeconfig: &mut Kubeconfig, name: &str) -> (String, String) {
        let entry = named_or_pushed(
            &mut kubeconfig.contexts,
            |c| c.name == name,
            || NamedContext {
                name: MADE_UP.into(),
                context: Some(Context {
                    cluster: MADE_UP.into(),
                    user: Some(MADE_UP.into()),
                    ..Context::default()
                }),
                other: Default::default(),
            },
        );
        let context = entry.context.get_or_insert_with(Context::default);
        if let Some(cluster) = &self.cluster {
            context.cluster = cluster.clone();
        }
        if let Some(user) = &self.user {
            context.user = Some(user.clone());
        }
        if context.cluster.is_empty() {
            context.cluster = MADE_UP.into();
        }
        let user = context.user.get_or_insert_with(|| MADE_UP.into()).clone();
        (context.cluster.clone(), user)
    }

    fn apply_to_cluster(&self, cluster: &mut Cluster) {
        if let Some(server) = &self.server {
            cluster.server = Some(server.clone());
        }
        if let Some(path) = &self.certificate_authority {
            cluster.certificate_authority = Some(path.display().to_string());
            cluster.certificate_authority_data = None;
        }
        if self.insecure_skip_tls_verify {
            // clientcmd drops the CA too: verification is off, not half on.
            cluster.insecure_skip_tls_verify = Some(true);
            cluster.certificate_authority = None;
            cluster.certificate_authority_data = None;
        }
    }

    fn apply_to_user(&self, user: &mut AuthInfo) {
        if let Some(token) = &self.token {
            user.token = Some(token.clone().into());
            user.token_file = None;
        }
        if let Some(who) = &self.impersonate {
            user.impersonate = Some(who.clone());
            user.impersonate_groups =
                (!self.impersonate_groups.is_empty()).then(|| self.impersonate_groups.clone());
        }
    }
}

/// The first entry `is` picks, else `make()` appended: kubeconfig lists are looked up by name,
/// and a flag may name one the file lacks.
fn named_or_pushed<T>(
    items: &mut Vec<T>,
    is: impl Fn(&T) -> bool,
    make: impl FnOnce() -> T,
) -> &mut T {
    let index = match items.iter().position(is) {
        Some(index) => index,
        None => {
            items.push(make());
            items.len() - 1
        }
    };
    &mut items[index]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig() -> Kubeconfig {
        serde_yaml_ng::from_str(
            "clusters:\n- name: a\n  cluster: {server: 'https://a:6443', certificate-authority-data: Q0E=}\n\
             - name: b\n  cluster: {server: 'https://b:6443'}\n\
             users:\n- name: u\n  user: {token: t-u}\n- name: v\n  user: {token: t-v}\n\
             contexts:\n- name: one\n  context: {cluster: a, user: u}\ncurrent-context: one\n",
        )
        .unwrap()
    }

    fn cluster<'a>(kc: &'a Kubeconfig, name: &str) -> &'a Cluster {
        kc.clusters
            .iter()
            .find(|c| c.name == name)
            .unwrap()
            .cluster
            .as_ref()
            .unwrap()
    }

    #[test]
    fn no_flags_change_nothing() {
        let mut kc = kubeconfig();
        let before = serde_yaml_ng::to_string(&kc).unwrap();
        assert_eq!(
            Overrides::default().apply(&mut kc, None, "f").unwrap(),
            Some("one".into())
        );
        assert_eq!(serde_yaml_ng::to_string(&kc).unwrap(), before);
    }

    #[test]
    fn cluster_and_user_switch_the_current_context() {
        let mut kc = kubeconfig();
        let o = Overrides {
            cluster: Some("b".into()),
            user: Some("v".into()),
            ..Overrides::default()
        };
        assert_eq!(o.apply(&mut kc, None, "f").unwrap(), Some("one".into()));
        let context = kc.contexts[0].context.as_ref().unwrap();
        assert_eq!(
            (context.cluster.as_str(), context.user.as_deref()),
            ("b", Some("v"))
        );
    }

    #[test]
    fn unknown_cluster_or_user_names_those_there_are() {
        let o = Overrides {
            user: Some("w".into()),
            ..Overrides::default()
        };
        assert_eq!(
            o.apply(&mut kubeconfig(), None, "f").unwrap_err().message,
            "user \"w\" is not in kubeconfig f (it has u, v); pick one with --user"
        );
        let o = Overrides {
            cluster: Some("c".into()),
            ..Overrides::default()
        };
        assert_eq!(
            o.apply(&mut kubeconfig(), None, "f").unwrap_err().message,
            "cluster \"c\" is not in kubeconfig f (it has a, b); pick one with --cluster"
        );
    }

    #[test]
    fn server_token_ca_and_impersonation_land_on_the_chosen_entries() {
        let mut kc = kubeconfig();
        let o = Overrides {
            server: Some("https://c:6443".into()),
            token: Some("t-flag".into()),
            certificate_authority: Some("/ca.crt".into()),
            impersonate: Some("jane".into()),
            impersonate_groups: vec!["ops".into()],
            ..Overrides::default()
        };
        o.apply(&mut kc, None, "f").unwrap();
        let a = cluster(&kc, "a");
        assert_eq!(a.server.as_deref(), Some("https://c:6443"));
        assert_eq!(a.certificate_authority.as_deref(), Some("/ca.crt"));
        assert_eq!(a.certificate_authority_data, None);
        assert_eq!(cluster(&kc, "b").server.as_deref(), Some("https://b:6443"));
        let u = kc.auth_infos[0].auth_info.as_ref().unwrap();
        assert!(u.token.is_some() && u.token_file.is_none());
        assert_eq!(u.impersonate.as_deref(), Some("jane"));
        assert_eq!(
            u.impersonate_groups.as_deref(),
            Some(&["ops".to_string()][..])
        );
    }

    #[test]
    fn insecure_drops_the_ca() {
        let mut kc = kubeconfig();
        let o = Overrides {
            insecure_skip_tls_verify: true,
            ..Overrides::default()
        };
        o.apply(&mut kc, None, "f").unwrap();
        let a = cluster(&kc, "a");
        assert_eq!(a.insecure_skip_tls_verify, Some(true));
        assert_eq!(a.certificate_authority_data, None);
    }

    #[test]
    fn server_alone_makes_up_a_context() {
        let mut kc = Kubeconfig::default();
        let o = Overrides {
            server: Some("https://c:6443".into()),
            token: Some("t".into()),
            ..Overrides::default()
        };
        assert_eq!(
            o.apply(&mut kc, None, "f").unwrap(),
            Some(MADE_UP.to_string())
        );
        assert_eq!(
            cluster(&kc, MADE_UP).server.as_deref(),
            Some("https://c:6443")
        );
        assert!(kc.auth_infos[0].auth_info.as_ref().unwrap().token.is_some());
    }
}
