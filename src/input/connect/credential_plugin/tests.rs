//! Running real child processes: credentials read, failures worded and redacted, a hanging
//! plugin and its forked helper stopped at the limit.

use super::*;

fn exec(script: &str, env: &[(&str, &str)]) -> ExecConfig {
    let env: Vec<_> = env
        .iter()
        .map(|(k, v)| serde_json::json!({"name": k, "value": v}))
        .collect();
    serde_json::from_value(serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": "/bin/sh",
        "args": ["-c", script],
        "env": env,
    }))
    .unwrap()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn a_token_is_read_from_json_and_yaml() {
    let json = r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t0k"}}"#;
    assert_eq!(
        parse(json.as_bytes()).unwrap().token.as_deref(),
        Some("t0k")
    );
    let yaml = "kind: ExecCredential\nstatus:\n  token: t0k\n";
    assert_eq!(
        parse(yaml.as_bytes()).unwrap().token.as_deref(),
        Some("t0k")
    );
}

#[test]
fn garbage_is_refused_without_quoting_it() {
    let why = parse(b"{not json: s3cr3t-garbage").err().unwrap();
    assert!(!why.contains("s3cr3t"), "{why}");
    let why = parse(br#"{"status":{}}"#).err().unwrap();
    assert!(why.contains("without status.token"), "{why}");
}

#[test]
fn a_failure_names_the_command_status_and_redacted_stderr() {
    let failure = block_on(run(
        &exec(
            "echo tok-abcdef123456; echo \"denied for tok-abcdef123456 with $VAULT_TOKEN\" >&2; exit 7",
            &[("VAULT_TOKEN", "s3cr3t-vault")],
        ),
        Some(Duration::from_secs(20)),
    ))
    .err()
    .unwrap();
    let text = failure.message();
    assert!(
        text.contains("credential plugin sh failed (exit status 7)"),
        "{text}"
    );
    assert!(text.contains("denied for"), "{text}");
    assert!(
        !text.contains("tok-abcdef") && !text.contains("s3cr3t"),
        "{text}"
    );
}

#[test]
fn a_hanging_plugin_and_its_forked_helper_are_stopped_at_the_limit() {
    let dir = std::env::temp_dir().join(format!("k3sdoctor-plugin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("helper.pid");
    // The helper keeps stdout open after the plugin itself would have exited.
    let script = format!("sleep 60 & echo $! > {}; sleep 60", pid_file.display());
    let failure = block_on(run(&exec(&script, &[]), Some(Duration::from_secs(2))))
        .err()
        .unwrap();
    assert!(
        matches!(failure, PluginFailure::TimedOut { .. }),
        "{failure:?}"
    );
    assert!(
        failure.message().contains("did not answer within"),
        "{}",
        failure.message()
    );
    let helper = std::fs::read_to_string(&pid_file).unwrap();
    let stat = format!("/proc/{}/stat", helper.trim());
    // Gone, or a zombie waiting to be reaped: either way killed with its group.
    let alive = || {
        std::fs::read_to_string(&stat)
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or_default()
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the forked helper {} survived", helper.trim());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_missing_command_says_so() {
    let mut config = exec("", &[]);
    config.command = Some("/nonexistent/kubelogin".into());
    let failure = block_on(run(&config, Some(Duration::from_secs(5))))
        .err()
        .unwrap();
    assert_eq!(
        failure.message(),
        "cannot run the credential plugin kubelogin (No such file or directory); install it, or fix the \
         command in the kubeconfig's users[].user.exec"
    );
}
