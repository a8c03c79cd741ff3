use serde_json::json;

use super::*;

#[test]
fn ready_counts_follow_each_kinds_rule() {
    let endpoints = json!({"subsets": [
        {"addresses": [{"ip": "10.0.0.1"}], "notReadyAddresses": [{"ip": "10.0.0.2"}]},
        {"notReadyAddresses": [{"ip": "10.0.0.3"}]}
    ]});
    assert_eq!(endpoints_ready(&endpoints), 1);
    assert_eq!(endpoints_ready(&json!({})), 0);
    let slice = json!({
        "metadata": {"labels": {"kubernetes.io/service-name": "svc"}},
        "endpoints": [
            {"addresses": ["10.0.0.1"]},
            {"addresses": ["10.0.0.2"], "conditions": {"ready": true}},
            {"addresses": ["10.0.0.3"], "conditions": {"ready": false}},
            {"addresses": ["10.0.0.4"], "conditions": {"ready": null}}
        ]
    });
    assert_eq!(slice_ready(&slice), 3, "nil means ready");
    assert_eq!(slice_service(&slice), Some("svc"));
}

#[test]
fn a_namespace_not_read_is_not_an_absent_service() {
    let mut services = BackendObjects::default();
    services.add("gk", "svc", 0);
    services.read_namespace("empty");
    services
        .refused
        .insert("secret".into(), "needs get services".into());
    let backends = WebhookBackends {
        services: Collected::Read(services),
        endpoints: Collected::NotInDump("not in dump".into()),
        slices: Collected::NotAsked,
    };
    assert_eq!(backends.service("gk", "svc"), Seen::Present(0));
    assert_eq!(backends.service("empty", "svc"), Seen::Absent);
    assert_eq!(
        backends.service("secret", "svc"),
        Seen::NotRead("needs get services".into())
    );
    assert!(matches!(backends.service("other", "svc"), Seen::NotRead(_)));
    assert_eq!(
        backends.endpoints("gk", "svc"),
        Seen::NotRead("not in dump".into())
    );
    assert!(matches!(backends.slices("gk", "svc"), Seen::NotRead(_)));
}
