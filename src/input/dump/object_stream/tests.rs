use serde_json::json;

use super::*;

/// Keeps what names kind `Node`, as the dump reader keeps only what it uses.
#[derive(Default)]
struct Nodes {
    kept: Vec<Value>,
    dropped: Vec<Value>,
    documents: usize,
}

impl ObjectSink for Nodes {
    fn document(&mut self, _: &Map<String, Value>) {
        self.documents += 1;
    }

    fn wants(&self, fields: &Map<String, Value>) -> bool {
        fields.get("kind").and_then(Value::as_str) == Some("Node")
    }

    fn object(&mut self, object: Value) {
        if object.get("kind").and_then(Value::as_str) == Some("Node") {
            self.kept.push(object);
        } else {
            self.dropped.push(object);
        }
    }
}

fn read(text: &str, shape: Shape) -> Nodes {
    let mut sink = Nodes::default();
    read_objects(text, "t.json", shape, &mut sink).unwrap();
    sink
}

#[test]
fn a_lists_kind_after_its_items_still_names_them() {
    let text =
        r#"{"apiVersion":"v1","items":[{"metadata":{"name":"a"}},{"a":{}},7],"kind":"NodeList"}"#;
    let read = read(text, Shape::default());
    assert_eq!(
        read.kept,
        [
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}),
            json!({"apiVersion": "v1", "kind": "Node", "a": {}})
        ]
    );
    assert_eq!(read.dropped, [Value::Null], "a number is no object");
    assert_eq!(read.documents, 1);
}

#[test]
fn json_and_yaml_give_the_same_objects() {
    let value = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"kind": "NodeList", "apiVersion": "v1", "items": [{"metadata": {"name": "deep"}}]},
        {"kind": "Node", "metadata": {"name": "x", "labels": {"a": "null"}}, "spec": {"taints": []}},
        {"kind": "Pod", "metadata": {"name": "p"}, "items": [1, 2]},
        {"kind": "Node", "metadata": {"name": "with-items"}, "items": [{"b": "null"}, {}]},
        [1, {"kind": "Node"}]
    ]});
    let shape = Shape {
        assume: Some(("v1", "Node")),
        null_strings: true,
    };
    let json = read(&value.to_string(), shape);
    let yaml = read(&serde_yaml_ng::to_string(&value).unwrap(), shape);
    let expected = [
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "deep"}}),
        json!({"kind": "Node", "metadata": {"name": "x", "labels": {}}, "spec": {"taints": []}}),
        // Kept whole, its items' "null"s dropped; only the document's own items take the
        // assumed kind.
        json!({"kind": "Node", "metadata": {"name": "with-items"}, "items": [{}, {}]}),
    ];
    assert_eq!(json.kept, expected);
    assert_eq!(yaml.kept, expected);
    // What is not kept is not built: the Pod's items are left out.
    let dropped = [
        json!({"kind": "Pod", "metadata": {"name": "p"}}),
        Value::Null,
    ];
    assert_eq!(json.dropped, dropped);
    assert_eq!(yaml.dropped, dropped);
}

#[test]
fn bare_arrays_and_concatenated_documents_are_each_documents() {
    let text =
        "[{\"kind\":\"Node\"},[{\"kind\":\"Node\"}]]\n{\"kind\":\"NodeList\",\"items\":[{}]} 3";
    let read = read(text, Shape::default());
    assert_eq!(read.kept.len(), 2);
    assert_eq!(read.dropped, [Value::Null, Value::Null]);
    assert_eq!(read.documents, 2, "the array's objects and the list");
}

#[test]
fn a_key_given_twice_keeps_its_last_value() {
    let text = r#"{"kind":"NodeList","items":[{"a":1}],"items":"none"}{"kind":"NodeList","items":"x","items":[{"a":2}]}"#;
    let read = read(text, Shape::default());
    assert_eq!(read.kept, [json!({"kind": "Node", "a": 2})]);
    assert_eq!(read.dropped, [json!({"kind": "NodeList", "items": "none"})]);
}

#[test]
fn a_file_that_does_not_parse_gives_no_object() {
    let mut sink = Nodes::default();
    let err = read_objects(
        r#"[{"kind":"Node"}, {"#,
        "bad.json",
        Shape::default(),
        &mut sink,
    )
    .unwrap_err();
    assert!(
        err.message.starts_with("cannot parse dump file bad.json: "),
        "{}",
        err.message
    );
    assert!(sink.kept.is_empty() && sink.dropped.is_empty());
}
