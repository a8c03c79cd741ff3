//! JSON encoding the way kube-apiserver (Go `encoding/json`) writes it.
//!
//! Built-in objects come back in Go struct-field order (`kind`, `apiVersion`, `metadata{name,
//! namespace, uid, …}`, …), custom resources and Go maps with sorted keys (wire samples 010 vs 091).
//! Strings are escaped like Go does: `<`, `>`, `&`, U+2028/U+2029 as `\uXXXX` (sample 099 shows
//! `\u003cnil\u003e`). `serde_json::Map` is sorted, so only the struct order needs a table.

use serde_json::Value;
use std::collections::BTreeSet;

/// How the keys of an object are ordered.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Layout {
    /// A built-in type, named by its kind (`Lease`, `LeaseList`, `Status`, …): struct order.
    Builtin(&'static str),
    /// Unstructured content (custom resources): every object sorted by key.
    Sorted,
}

const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];
const MANAGED_FIELDS_ENTRY: &[&str] = &[
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];
const OWNER_REFERENCE: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

/// Struct field order of the object found at `path` inside an object of `kind`.
/// `path` holds field names, with `*` for array elements.
fn struct_order(kind: &str, path: &[&str]) -> &'static [&'static str] {
    const GROUP: &[&str] = &[
        "name",
        "versions",
        "preferredVersion",
        "serverAddressByClientCIDRs",
    ];
    match (kind, path) {
        ("APIResourceList", []) => return &["kind", "apiVersion", "groupVersion", "resources"],
        ("APIResourceList", ["resources", "*"]) => {
            return &[
                "name",
                "singularName",
                "namespaced",
                "group",
                "version",
                "kind",
                "verbs",
                "shortNames",
                "categories",
                "storageVersionHash",
            ];
        }
        ("APIGroupList", []) => return &["kind", "apiVersion", "groups"],
        ("APIGroupList", ["groups", "*"]) => return GROUP,
        ("APIGroup", []) => return &["kind", "apiVersion", "name", "versions", "preferredVersion"],
        ("APIVersions", []) => return &["kind", "versions", "serverAddressByClientCIDRs"],
        ("APIVersions", ["serverAddressByClientCIDRs", "*"]) => {
            return &["clientCIDR", "serverAddress"];
        }
        ("APIResourceList" | "APIGroupList", _) => return &[],
        _ => {}
    }
    if let Some(item_kind) = kind.strip_suffix("List") {
        if path.len() >= 2 && path[0] == "items" {
            return struct_order(item_kind, &path[2..]);
        }
        return match path {
            [] => &["kind", "apiVersion", "metadata", "items"],
            ["metadata"] => &[
                "selfLink",
                "resourceVersion",
                "continue",
                "remainingItemCount",
            ],
            _ => &[],
        };
    }
    match (kind, path) {
        (_, ["metadata"]) if kind != "Status" => OBJECT_META,
        (_, ["metadata", "managedFields", "*"]) => MANAGED_FIELDS_ENTRY,
        (_, ["metadata", "ownerReferences", "*"]) => OWNER_REFERENCE,
        ("Status", []) => &[
            "kind",
            "apiVersion",
            "metadata",
            "status",
            "message",
            "reason",
            "details",
            "code",
        ],
        ("Status", ["metadata"]) => &[
            "selfLink",
            "resourceVersion",
            "continue",
            "remainingItemCount",
        ],
        ("Status", ["details"]) => &[
            "name",
            "group",
            "kind",
            "uid",
            "causes",
            "retryAfterSeconds",
        ],
        ("Status", ["details", "causes", "*"]) => &["reason", "message", "field"],
        ("Lease", []) => &["kind", "apiVersion", "metadata", "spec"],
        ("Lease", ["spec"]) => &[
            "holderIdentity",
            "leaseDurationSeconds",
            "acquireTime",
            "renewTime",
            "leaseTransitions",
            "strategy",
            "preferredHolder",
        ],
        ("ConfigMap", []) => &[
            "kind",
            "apiVersion",
            "metadata",
            "immutable",
            "data",
            "binaryData",
        ],
        ("Node", []) => &["kind", "apiVersion", "metadata", "spec", "status"],
        ("Node", ["spec"]) => &[
            "podCIDR",
            "podCIDRs",
            "providerID",
            "unschedulable",
            "taints",
            "configSource",
            "externalID",
        ],
        ("Node", ["spec", "taints", "*"]) => &["key", "value", "effect", "timeAdded"],
        ("Node", ["status"]) => &[
            "capacity",
            "allocatable",
            "phase",
            "conditions",
            "addresses",
            "daemonEndpoints",
            "nodeInfo",
            "images",
            "volumesInUse",
            "volumesAttached",
            "config",
        ],
        ("Node", ["status", "conditions", "*"]) => &[
            "type",
            "status",
            "lastHeartbeatTime",
            "lastTransitionTime",
            "reason",
            "message",
        ],
        ("Node", ["status", "addresses", "*"]) => &["type", "address"],
        ("Node", ["status", "nodeInfo"]) => &[
            "machineID",
            "systemUUID",
            "bootID",
            "kernelVersion",
            "osImage",
            "containerRuntimeVersion",
            "kubeletVersion",
            "kubeProxyVersion",
            "operatingSystem",
            "architecture",
        ],
        ("SelfSubjectAccessReview", []) => &["kind", "apiVersion", "metadata", "spec", "status"],
        ("SelfSubjectAccessReview", ["spec"]) => &["resourceAttributes", "nonResourceAttributes"],
        ("SelfSubjectAccessReview", ["spec", "resourceAttributes"]) => &[
            "namespace",
            "verb",
            "group",
            "version",
            "resource",
            "subresource",
            "name",
        ],
        ("SelfSubjectAccessReview", ["spec", "nonResourceAttributes"]) => &["path", "verb"],
        ("SelfSubjectAccessReview", ["status"]) => {
            &["allowed", "denied", "reason", "evaluationError"]
        }
        ("WatchEvent", []) => &["type", "object"],
        _ => &[],
    }
}

/// Compact JSON plus the trailing newline the apiserver writes after every body.
pub(crate) fn to_body(v: &Value, layout: Layout) -> String {
    let mut out = Writer::new(layout, None, None);
    out.value(v);
    out.buf.push('\n');
    out.buf
}

/// Indented JSON (two spaces, no trailing newline) as for `?pretty=true` or curl user agents.
pub(crate) fn to_pretty(v: &Value, layout: Layout) -> String {
    let mut out = Writer::new(layout, Some(0), None);
    out.value(v);
    out.buf
}

/// Compact JSON without a newline.
pub(crate) fn to_compact(v: &Value, layout: Layout) -> String {
    let mut out = Writer::new(layout, None, None);
    out.value(v);
    out.buf
}

/// Compact JSON where the objects at the `touched` paths have sorted keys: what a Go JSON-patch
/// library emits after patching (it re-marshals the maps it descended into, untouched sub-documents
/// keep their original bytes). Used to reproduce the patched document embedded in PATCH errors.
pub(crate) fn to_compact_touched(
    v: &Value,
    layout: Layout,
    touched: &BTreeSet<Vec<String>>,
) -> String {
    let mut out = Writer::new(layout, None, Some(touched));
    out.value(v);
    out.buf
}

struct Writer<'a> {
    buf: String,
    layout: Layout,
    indent: Option<usize>,
    touched: Option<&'a BTreeSet<Vec<String>>>,
    path: Vec<String>,
}

impl<'a> Writer<'a> {
    fn new(
        layout: Layout,
        indent: Option<usize>,
        touched: Option<&'a BTreeSet<Vec<String>>>,
    ) -> Self {
        Writer {
            buf: String::new(),
            layout,
            indent,
            touched,
            path: Vec::new(),
        }
    }

    fn newline(&mut self) {
        if let Some(level) = self.indent {
            self.buf.push('\n');
            for _ in 0..level {
                self.buf.push_str("  ");
            }
        }
    }

    fn keys<'v>(&self, map: &'v serde_json::Map<String, Value>) -> Vec<&'v String> {
        let sorted: Vec<&String> = map.keys().collect();
        let kind = match self.layout {
            Layout::Sorted => return sorted,
            Layout::Builtin(kind) => kind,
        };
        if let Some(touched) = self.touched
            && touched.contains(&self.path)
        {
            return sorted;
        }
        let path: Vec<&str> = self.path.iter().map(String::as_str).collect();
        let order = struct_order(kind, &path);
        let mut keys: Vec<&String> = order
            .iter()
            .filter_map(|k| map.get_key_value(*k).map(|(k, _)| k))
            .collect();
        keys.extend(sorted.into_iter().filter(|k| !order.contains(&k.as_str())));
        keys
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.buf.push_str("null"),
            Value::Bool(b) => self.buf.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => self.buf.push_str(&n.to_string()),
            Value::String(s) => escape_into(&mut self.buf, s),
            Value::Array(items) => {
                if items.is_empty() {
                    self.buf.push_str("[]");
                    return;
                }
                self.buf.push('[');
                self.indent = self.indent.map(|l| l + 1);
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(',');
                    }
                    self.newline();
                    self.path.push("*".to_string());
                    self.value(item);
                    self.path.pop();
                }
                self.indent = self.indent.map(|l| l - 1);
                self.newline();
                self.buf.push(']');
            }
            Value::Object(map) => {
                if map.is_empty() {
                    self.buf.push_str("{}");
                    return;
                }
                self.buf.push('{');
                self.indent = self.indent.map(|l| l + 1);
                for (i, key) in self.keys(map).into_iter().enumerate() {
                    if i > 0 {
                        self.buf.push(',');
                    }
                    self.newline();
                    escape_into(&mut self.buf, key);
                    self.buf.push(':');
                    if self.indent.is_some() {
                        self.buf.push(' ');
                    }
                    self.path.push(key.clone());
                    self.value(&map[key.as_str()]);
                    self.path.pop();
                }
                self.indent = self.indent.map(|l| l - 1);
                self.newline();
                self.buf.push('}');
            }
        }
    }
}

/// A JSON string literal escaped like Go's `encoding/json` (HTML-safe).
pub(crate) fn escape_into(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `strconv.Quote` / `%q`: used where the apiserver formats values into messages.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%#v` of a `[]string`, e.g. `[]string{"true"}`.
pub(crate) fn go_string_slice(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    format!("[]string{{{}}}", inner.join(", "))
}
