//! etcd's member list as the Rancher logs collector saves it: k3s `etcd/memberlist.json`
//! (the etcd v3 JSON gateway's `member/list` answer), RKE2 `etcd/memberlist` (etcdctl's
//! simple output: `id, status, name, peer URLs, client URLs, is learner`).

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Member {
    pub name: String,
    pub learner: bool,
}

pub(super) fn parse(text: &str) -> Option<Vec<Member>> {
    if text.trim_start().starts_with('{') {
        let list: Value = serde_json::from_str(text).ok()?;
        return Some(
            list.get("members")?
                .as_array()?
                .iter()
                .map(|m| Member {
                    name: m
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    learner: m.get("isLearner").and_then(Value::as_bool).unwrap_or(false),
                })
                .collect(),
        );
    }
    let members: Vec<Member> = text
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            (fields.len() >= 6).then(|| Member {
                name: fields[2].to_string(),
                learner: fields[5] == "true",
            })
        })
        .collect();
    (!members.is_empty()).then_some(members)
}

/// `s1-1a2b3c4d, s2-5e6f7a8b (learner)`; an unnamed member (added, never started) as `(unstarted)`.
pub(super) fn shown(members: &[Member]) -> String {
    members
        .iter()
        .map(|m| {
            let name = if m.name.is_empty() {
                "(unstarted)"
            } else {
                &m.name
            };
            if m.learner {
                format!("{name} (learner)")
            } else {
                name.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_formats_give_the_members() {
        let json = r#"{"header":{"cluster_id":"1"},"members":[{"ID":"1","name":"s1-aa","peerURLs":["https://10.0.0.1:2380"]},{"ID":"2","name":"s2-bb","isLearner":true}]}"#;
        let csv = "8e9e05c52164694d, started, s1-aa, https://10.0.0.1:2380, https://10.0.0.1:2379, false\n\
                   91bc3c398fb3c146, started, s2-bb, https://10.0.0.2:2380, https://10.0.0.2:2379, true\n";
        for text in [json, csv] {
            let members = parse(text).unwrap();
            assert_eq!(shown(&members), "s1-aa, s2-bb (learner)");
        }
        assert_eq!(parse("Error: context deadline exceeded"), None);
    }
}
