//! What an operator does to a NOSPACE etcd, through etcd's own JSON gateway on its client URL
//! (the bed's etcd 3.4 serves `/v3/...` over plain HTTP; the bed has no etcdctl): read the
//! revision and the status, compact, defragment, list and disarm alarms. Plain GETs too, for
//! its `/health` and its metrics listener.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

/// Every call is local and small; a defragment of a few tens of MiB takes well under a second.
const CALL_LIMIT: Duration = Duration::from_secs(20);

pub(crate) struct EtcdGateway {
    runtime: tokio::runtime::Runtime,
    client: Client<HttpConnector, Full<Bytes>>,
    /// `http://127.0.0.1:<client port>`.
    url: String,
}

/// One alarm etcd holds: the member that raised it (a uint64, as the gateway writes it: a
/// string) and its kind (`NOSPACE`, `CORRUPT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Alarm {
    pub member: String,
    pub kind: String,
}

impl EtcdGateway {
    pub(crate) fn new(url: &str) -> EtcdGateway {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the etcd gateway client");
        let client = {
            let _entered = runtime.enter();
            Client::builder(TokioExecutor::new()).build_http()
        };
        EtcdGateway {
            runtime,
            client,
            url: url.trim_end_matches('/').to_string(),
        }
    }

    /// A GET on any plain-HTTP URL (the metrics listener is not the client URL): the status
    /// and the body, `Err` when nothing answered.
    pub(crate) fn get_url(&self, url: &str) -> Result<(u16, String), String> {
        let request = http::Request::get(url)
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        self.send(request)
    }

    /// `{"health":"true"}` on the client URL.
    pub(crate) fn healthy(&self) -> bool {
        self.get_url(&format!("{}/health", self.url))
            .is_ok_and(|(code, body)| code == 200 && body.contains(r#""health":"true""#))
    }

    /// A POST to the gateway; `Err` names the call, the status and etcd's message.
    pub(crate) fn call(&self, path: &str, body: &Value) -> Result<Value, String> {
        let request = http::Request::post(format!("{}{path}", self.url))
            .header("Content-Type", "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| e.to_string())?;
        let (code, text) = self.send(request)?;
        if code != 200 {
            return Err(format!("etcd {path} answered HTTP {code}: {text}"));
        }
        serde_json::from_str(&text).map_err(|e| format!("etcd {path} answered {text:?}: {e}"))
    }

    /// The store's current revision (from any read's header).
    pub(crate) fn revision(&self) -> u64 {
        let answer = self
            .call("/v3/kv/range", &json!({"key": "AA==", "keys_only": true}))
            .unwrap_or_else(|e| panic!("{e}"));
        uint(&answer["header"]["revision"])
    }

    /// `etcdctl compact <revision> --physical`: returns once the old revisions are gone from
    /// the backend, so a defragment after it can give their pages back.
    pub(crate) fn compact(&self, revision: u64) {
        self.call(
            "/v3/kv/compaction",
            &json!({"revision": revision.to_string(), "physical": true}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }

    /// `etcdctl defrag` of the one member.
    pub(crate) fn defragment(&self) {
        self.call("/v3/maintenance/defragment", &json!({}))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    pub(crate) fn alarms(&self) -> Vec<Alarm> {
        let answer = self
            .call("/v3/maintenance/alarm", &json!({"action": "GET"}))
            .unwrap_or_else(|e| panic!("{e}"));
        answer["alarms"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|a| Alarm {
                member: a["memberID"].as_str().unwrap_or_default().to_string(),
                kind: a["alarm"].as_str().unwrap_or_default().to_string(),
            })
            .collect()
    }

    /// `etcdctl alarm disarm`: every alarm held, each by the member that raised it.
    pub(crate) fn disarm_all(&self) {
        for alarm in self.alarms() {
            self.call(
                "/v3/maintenance/alarm",
                &json!({"action": "DEACTIVATE", "memberID": alarm.member, "alarm": alarm.kind}),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// The member's physical size (`dbSize`), what its quota is checked against.
    pub(crate) fn db_size(&self) -> u64 {
        let answer = self
            .call("/v3/maintenance/status", &json!({}))
            .unwrap_or_else(|e| panic!("{e}"));
        uint(&answer["dbSize"])
    }

    fn send(&self, request: http::Request<Full<Bytes>>) -> Result<(u16, String), String> {
        let uri = request.uri().to_string();
        self.runtime.block_on(async {
            let answer = async {
                let response = self
                    .client
                    .request(request)
                    .await
                    .map_err(|e| format!("{uri}: {e}"))?;
                let code = response.status().as_u16();
                let body = response
                    .into_body()
                    .collect()
                    .await
                    .map_err(|e| format!("{uri}: {e}"))?
                    .to_bytes();
                Ok((code, String::from_utf8_lossy(&body).into_owned()))
            };
            tokio::time::timeout(CALL_LIMIT, answer)
                .await
                .unwrap_or_else(|_| Err(format!("{uri}: no answer within {CALL_LIMIT:?}")))
        })
    }
}

/// The gateway writes 64-bit integers as JSON strings; an absent one (a zero) is left out.
fn uint(value: &Value) -> u64 {
    match value {
        Value::String(s) => s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}")),
        Value::Number(n) => n.as_u64().expect("a non-negative integer"),
        Value::Null => 0,
        other => panic!("not a number: {other}"),
    }
}
