//! Loading the recorded exchanges in `tests/fixtures/wire/` and replaying them against the fake.

use crate::client::{self, Req, Response};
use crate::support::fake_api::{FakeApi, Role};
use serde_json::Value;
use std::path::PathBuf;

/// One recorded exchange.
pub(crate) struct Sample {
    pub method: String,
    pub target: String,
    pub request_headers: Vec<(String, String)>,
    pub request_body: Vec<u8>,
    pub status: u16,
    pub response_headers: Vec<(String, String)>,
    /// The raw response body, byte for byte.
    pub body: Vec<u8>,
}

impl Sample {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("sample body is JSON")
    }

    pub(crate) fn response_header(&self, name: &str) -> Option<&str> {
        self.response_headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The request as our client sends it; `<admin token>` etc. become the fake's tokens.
    pub(crate) fn request(&self) -> Req {
        let mut req = Req::new(&self.method, &self.target);
        for (k, v) in &self.request_headers {
            let v = v
                .replace("<admin token>", FakeApi::token(Role::Admin))
                .replace("<viewer token>", FakeApi::token(Role::ReadOnly))
                .replace("<nobody token>", FakeApi::token(Role::Nobody));
            req = req.header(k, &v);
        }
        req.body = self.request_body.clone();
        req
    }
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wire")
}

/// Load sample `NNN` (e.g. `"037"`).
pub(crate) fn sample(id: &str) -> Sample {
    let dir = fixtures();
    let mut http = None;
    let mut body = None;
    for entry in std::fs::read_dir(&dir).expect("fixtures dir") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if !name.starts_with(&format!("{id}-")) {
            continue;
        }
        if name.ends_with(".http") {
            http = Some(dir.join(&name));
        } else if name.contains(".body.") {
            body = Some(dir.join(&name));
        }
    }
    let http = http.unwrap_or_else(|| panic!("no fixture {id}-*.http"));
    let text = std::fs::read_to_string(&http).expect("read .http");
    let request = text
        .split("=== REQUEST\n")
        .nth(1)
        .expect("request section")
        .split("\n=== RESPONSE\n")
        .next()
        .expect("request");
    let (head, req_body) = request.split_once("\n\n").unwrap_or((request, ""));
    let mut head_lines = head.lines();
    let request_line: Vec<&str> = head_lines
        .next()
        .expect("request line")
        .split(' ')
        .collect();
    let request_headers = head_lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let response = text
        .split("=== RESPONSE\n")
        .nth(1)
        .expect("response section");
    let response_head = response.split("\n\n").next().expect("response head");
    let mut response_lines = response_head.lines();
    let status = response_lines
        .next()
        .expect("status line")
        .split(' ')
        .nth(1)
        .expect("code")
        .parse()
        .expect("numeric");
    let response_headers = response_lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let req_body = req_body.trim_end_matches('\n');
    Sample {
        method: request_line[0].to_string(),
        target: request_line[1].to_string(),
        request_headers,
        request_body: if req_body.starts_with('<') {
            Vec::new()
        } else {
            req_body.as_bytes().to_vec()
        },
        status,
        response_headers,
        body: body
            .map(|p| std::fs::read(p).expect("read body"))
            .unwrap_or_default(),
    }
}

/// Replace volatile values (times, generated uids the test could not pin) so objects compare.
pub(crate) fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| {
                    let volatile = matches!(
                        k.as_str(),
                        "creationTimestamp" | "deletionTimestamp" | "time" | "uid"
                    );
                    let x = if volatile && x.is_string() {
                        Value::String(format!("<{k}>"))
                    } else {
                        normalize(x)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

/// A fake plus helpers to seed it and replay samples.
pub(crate) struct Replay {
    pub api: FakeApi,
}

impl Replay {
    pub(crate) fn new() -> Replay {
        Replay {
            api: FakeApi::start(),
        }
    }

    /// The next write gets resourceVersion `rv + 1`.
    pub(crate) fn at_rv(&self, rv: u64) -> &Self {
        self.api.set_resource_version(rv);
        self
    }

    /// Store `obj` so that it gets resourceVersion `rv`.
    pub(crate) fn seed(&self, rv: u64, obj: Value) -> &Self {
        self.api.set_resource_version(rv - 1);
        let stored = self.api.put(obj);
        assert_eq!(stored["metadata"]["resourceVersion"], rv.to_string());
        self
    }

    pub(crate) fn send(&self, sample: &Sample) -> Response {
        client::send(self.api.addr(), &sample.request())
    }

    /// Replay a sample and require the same status code and byte-identical body.
    pub(crate) fn exact(&self, id: &str) -> Response {
        let s = sample(id);
        let got = self.send(&s);
        assert_eq!(got.status, s.status, "{id}: status; body {}", got.text());
        assert_eq!(got.text(), String::from_utf8_lossy(&s.body), "{id}: body");
        if let Some(ct) = s.response_header("Content-Type") {
            assert_eq!(got.header("Content-Type"), Some(ct), "{id}: content type");
        }
        got
    }

    /// Replay a sample and require the same status code and the same JSON after [`normalize`].
    pub(crate) fn similar(&self, id: &str) -> Response {
        let s = sample(id);
        let got = self.send(&s);
        assert_eq!(got.status, s.status, "{id}: status; body {}", got.text());
        let (want, have) = (normalize(&s.json()), normalize(&got.json()));
        assert_eq!(have, want, "{id}: body\n have {have}\n want {want}");
        got
    }
}
