//! With limits of a few hundred bytes, every path of the split runs on texts small enough to
//! read: each must give exactly the objects the whole-text parse gives.

use serde_json::{Value, json};

use super::Limits;
use crate::input::ReadError;
use crate::input::dump::object_stream::{AllObjects, Shape, read_large_yaml, read_objects};

const SMALL: Limits = Limits {
    whole: 200,
    run: 90,
};

fn split(text: &str) -> Result<Vec<Value>, ReadError> {
    let mut all = AllObjects::default();
    read_large_yaml(text, "big.yaml", SMALL, Shape::default(), &mut all)?;
    Ok(all.0)
}

fn whole(text: &str) -> Vec<Value> {
    let mut all = AllObjects::default();
    read_objects(text, "big.yaml", Shape::default(), &mut all).unwrap();
    all.0
}

fn same(text: &str) {
    assert!(text.len() > SMALL.whole, "too small to split: {text}");
    assert_eq!(split(text).unwrap(), whole(text), "{text}");
}

fn node(n: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("node-{n}"),
        "labels": {"a": "1", "n": n}}, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}})
}

#[test]
fn kubectl_lists_give_the_objects_a_whole_parse_gives() {
    let list = json!({"apiVersion": "v1", "items": (0..12).map(node).collect::<Vec<_>>(),
        "kind": "List", "metadata": {"resourceVersion": ""}});
    same(&serde_yaml_ng::to_string(&list).unwrap());
    // Several documents, small and large; a list whose kind names its items.
    let lease = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: k3s, namespace: kube-system}\n";
    let nodes = json!({"apiVersion": "v1", "kind": "NodeList",
        "items": (0..9).map(|n| json!({"metadata": {"name": format!("n{n}")}})).collect::<Vec<_>>()});
    same(&format!(
        "{lease}---\n{}---\n# only a comment\n---\n{lease}",
        serde_yaml_ng::to_string(&nodes).unwrap()
    ));
}

#[test]
fn indentation_comments_and_a_missing_last_newline_are_followed() {
    let text = "kind: NodeList # the list\napiVersion: v1\nitems:\n  # first\n  - metadata:\n      name: a\n    spec: {}\n\n  -   metadata: {name: b}\n  - metadata: {name: \"c: d\"}\n    note: |\n      - not an item\n      - nor this\n  - 7\n  - [1, 2]\n  - metadata: {name: last}\nmetadata: {resourceVersion: \"1\"}\n";
    same(text);
    same(
        text.replace("metadata: {resourceVersion: \"1\"}\n", "")
            .trim_end(),
    );
    // A top-level sequence: each item is a document.
    let sequence: String = (0..8)
        .map(|n| format!("- apiVersion: v1\n  kind: Node\n  metadata: {{name: s{n}}}\n"))
        .collect();
    same(&sequence);
}

#[test]
fn an_item_too_large_to_build_whole_is_split_in_turn() {
    let inner = json!({"apiVersion": "v1", "kind": "NodeList",
        "items": (0..10).map(node).collect::<Vec<_>>()});
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [node(99), inner,
        (0..40).collect::<Vec<_>>(), "x".repeat(300), node(100)]});
    let text = serde_yaml_ng::to_string(&list).unwrap();
    let found = split(&text).unwrap();
    let names: Vec<&str> = found
        .iter()
        .map(|o| {
            o.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("-")
        })
        .collect();
    let mut expected = vec!["node-99"];
    let inner_names: Vec<String> = (0..10).map(|n| format!("node-{n}")).collect();
    expected.extend(inner_names.iter().map(String::as_str));
    // A large list in a list and a large string are no objects, and are not built.
    expected.extend(["-", "-", "node-100"]);
    assert_eq!(names, expected);
    assert_eq!(found, {
        let mut whole = whole(&text);
        whole[11] = Value::Null;
        whole[12] = Value::Null;
        whole
    });
}

fn refused(text: &str, says: &str) {
    let mut all = AllObjects::default();
    let err = read_large_yaml(text, "big.yaml", SMALL, Shape::default(), &mut all).unwrap_err();
    assert!(
        err.message.starts_with("cannot parse dump file big.yaml: ") && err.message.contains(says),
        "{}",
        err.message
    );
    assert!(all.0.is_empty(), "no object reaches the sink: {:?}", all.0);
}

#[test]
fn what_cannot_be_split_is_refused_with_a_way_out_before_any_object_is_kept() {
    let flow = format!(
        "kind: List\nitems: [{}]\n",
        ["{kind: Node, metadata: {name: a}}"; 9].join(", ")
    );
    refused(&flow, "is not on a `- ` line of its own");
    refused(
        &flow,
        "as `kubectl get ... -o yaml` writes it (or as JSON, with `-o json`)",
    );
    let anchors = format!(
        "kind: List\nitems:\n- &n {{kind: Node}}\n{}",
        "- *n\n".repeat(60)
    );
    refused(&anchors, "uses YAML anchors, aliases or tags");
    let one_object = format!("kind: ConfigMap\ndata:\n  a: {}\n", "x".repeat(300));
    refused(
        &one_object,
        "more than any one object the API server stores",
    );
    let twice = format!(
        "kind: List\nitems:\n{}items:\n- {{}}\n",
        "- {kind: Node}\n".repeat(20)
    );
    refused(&twice, "its `items` are not one block list");
    let carriage = format!(
        "kind: List\nitems:\n{}- {{}}\r- {{}}\n",
        "- {kind: Node}\n".repeat(20)
    );
    refused(&carriage, "line 23 ends in a lone carriage return");
    let broken = format!(
        "kind: List\nitems:\n{}- {{kind: [Node}}\n",
        "- {kind: Node}\n".repeat(20)
    );
    refused(&broken, "at line 23 column");
    // Past the syntax check, an error while building a run names its line in the file.
    let list_key = format!(
        "kind: List\nitems:\n{}- {{[1, 2]: x}}\n",
        "- {kind: Node}\n".repeat(20)
    );
    let err = split(&list_key).unwrap_err();
    assert!(err.message.contains("at line 23 column"), "{}", err.message);
    refused(
        &format!("{}\n", "# nothing\n".repeat(30)),
        "no documents found",
    );
}

fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-z0-9 :#-]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map("[a-z]{1,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #[test]
    fn any_list_splits_into_what_a_whole_parse_gives(
        items in proptest::collection::vec(any_value(), 4..40),
        kind in proptest::sample::select(vec!["List", "NodeList", "Node"]),
    ) {
        // Each item small enough to build whole, the list too large to.
        proptest::prop_assume!(items.iter().all(|item| serde_yaml_ng::to_string(item).unwrap().len() < 150));
        let list = json!({"apiVersion": "v1", "kind": kind, "items": items, "metadata": {}});
        let text = serde_yaml_ng::to_string(&list).unwrap();
        proptest::prop_assume!(text.len() > SMALL.whole);
        // An item too large to build whole is not built when it is a list or a string.
        let whole: Vec<Value> = whole(&text)
            .into_iter()
            .map(|v| if v.is_object() { v } else { Value::Null })
            .collect();
        let split: Vec<Value> = split(&text)
            .unwrap()
            .into_iter()
            .map(|v| if v.is_object() { v } else { Value::Null })
            .collect();
        proptest::prop_assert_eq!(split, whole);
    }

    #[test]
    fn any_text_is_read_or_refused_and_never_panics(text in "[-a-z:{}\\[\\], \n#&*!|>'\"\t\r]{200,600}") {
        let _ = split(&text);
    }
}
