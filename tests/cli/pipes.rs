//! Output as scripts meet it: `awk` over table rows, `jq` over JSON lines, YAML for YAML 1.1
//! readers, kubectl's ages, and colour by the usual environment variables.

use crate::support::harness::{k3sdoctor, on_terminal, repo_path};

const DUMP: &str = "tests/fixtures/split-cluster";

/// `pipeline` run by `sh` with `$K3SDOCTOR` and `$DUMP` set, its stdout.
fn shell(pipeline: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("sh")
        .args(["-c", pipeline])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("K3SDOCTOR", env!("CARGO_BIN_EXE_k3sdoctor"))
        .env("DUMP", repo_path(DUMP))
        .output()
        .expect("sh");
    // Off a terminal a table command's summary and findings go to stderr;
    // a pipeline that wants stdout alone says `2>/dev/null`.
    assert!(
        out.stderr.is_empty(),
        "{pipeline}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn awk_picks_the_holder_and_node_of_each_lock() {
    let got = shell(
        // Every row has the same fields (one-token ages), and stdout has nothing but rows
        //: no `NF == 7` filter is needed.
        r#""$K3SDOCTOR" --from-file "$DUMP" leases --no-headers 2>/dev/null | awk '{print $1, $2, $3, $4}'"#,
    );
    assert_eq!(
        got,
        "k3s prod-k3s-1 prod-k3s-1 held\nk3s-etcd prod-k3s-2 prod-k3s-2 held\n"
    );
}

#[test]
fn no_headers_drops_only_the_header_line_of_every_table() {
    for args in [
        &["leases"][..],
        &["leases", "-o", "wide"],
        &["snapshots", "list"],
        &["snapshots", "list", "-o", "wide"],
    ] {
        let dump = repo_path(DUMP).display().to_string();
        let run = |extra: &[&str]| {
            k3sdoctor([&["--from-file", dump.as_str()][..], args, extra].concat())
                .run()
                .stdout
        };
        let with = run(&[]);
        let without = run(&["--no-headers"]);
        let headers: Vec<&str> = with
            .lines()
            .filter(|l| {
                l.starts_with("LOCK ") || l.starts_with("FILE ") || l.starts_with("OTHER ELECTION")
            })
            .collect();
        assert!(!headers.is_empty(), "{args:?}: {with}");
        let expected: Vec<&str> = with.lines().filter(|l| !headers.contains(l)).collect();
        assert_eq!(without.lines().collect::<Vec<_>>(), expected, "{args:?}");
    }
}

#[test]
fn ages_read_as_kubectl_prints_them() {
    // The dump's k3s Lease was renewed at 2024-05-31T12:10:38.9Z.
    for (now, age) in [
        ("2024-06-02T00:10:39Z", "36h Ready"),
        ("2024-06-06T11:10:39Z", "5d23h Ready"),
        ("2024-05-31T12:13:39Z", "3m Ready"),
    ] {
        // One token, as kubectl's AGE: the STATUS after it is $6 on every row.
        let got = shell(&format!(
            r#""$K3SDOCTOR" --from-file "$DUMP" leases --no-headers --now {now} 2>/dev/null | awk '$1 == "k3s" {{print $5, $6}}'"#
        ));
        assert_eq!(got.trim(), age, "--now {now}");
    }
}

#[test]
fn yaml_timestamps_are_quoted_as_kubectl_quotes_them() {
    let dump = repo_path(DUMP).display().to_string();
    let yaml = k3sdoctor(["--from-file", dump.as_str(), "leases", "-o", "yaml"])
        .run()
        .stdout;
    assert!(
        yaml.contains("renewTime: \"2024-05-31T12:10:38.904117Z\""),
        "{yaml}"
    );
    let plain = regex::Regex::new(r#"(?m)(: |- )\d{4}-\d\d-\d\dT"#).unwrap();
    assert!(!plain.is_match(&yaml), "an unquoted timestamp:\n{yaml}");
    // A YAML 1.1 reader (PyYAML) reads them as strings, as the schema says they are.
    let got = shell(
        r#""$K3SDOCTOR" --from-file "$DUMP" leases -o yaml | python3 -c 'import sys, yaml; d = yaml.safe_load(sys.stdin); print(type(d["now"]["time"]).__name__)'"#,
    );
    assert_eq!(got.trim(), "str");
}

#[test]
fn colour_follows_clicolor_force_no_color_and_term_dumb() {
    let bin = env!("CARGO_BIN_EXE_k3sdoctor");
    let dump = repo_path(DUMP);
    let command = |env: &str| format!("{env} {bin} --from-file {} leases", dump.display());
    // A pipe: plain, unless CLICOLOR_FORCE asks.
    let piped = shell(r#""$K3SDOCTOR" --from-file "$DUMP" leases 2>&1"#);
    assert!(!piped.contains('\x1b'));
    let forced = shell(r#"CLICOLOR_FORCE=1 "$K3SDOCTOR" --from-file "$DUMP" leases 2>&1"#);
    assert!(forced.contains("\x1b[1;31mERROR"), "{forced}");
    let never =
        shell(r#"CLICOLOR_FORCE=1 "$K3SDOCTOR" --from-file "$DUMP" leases --color never 2>&1"#);
    assert!(!never.contains('\x1b'));
    // A terminal: coloured, unless NO_COLOR or TERM=dumb.
    let home = tempfile::tempdir().unwrap();
    let screen = |env: &str| {
        on_terminal(&command(env), home.path())
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let Some(coloured) = screen("") else { return };
    assert!(coloured.contains("\x1b[1;31mERROR"), "{coloured}");
    for env in ["NO_COLOR=1", "TERM=dumb", "CLICOLOR=0"] {
        let plain = screen(&format!("env {env}")).unwrap();
        assert!(!plain.contains('\x1b'), "{env}: {plain}");
        assert!(plain.contains("ERROR"), "{env}: {plain}");
    }
}

#[test]
fn a_holder_without_a_node_reads_none_in_one_field() {
    use crate::support::fake_api::{FakeApi, Role};
    use crate::support::objects::{NOW, lease, server};
    let fake = FakeApi::with_objects([
        server("s1", "v1.29.4+k3s1"),
        lease("k3s", "ghost", 1),
        lease("k3s-etcd", "ghost", 1),
    ]);
    let out = k3sdoctor(["leases", "--no-headers", "--now", NOW])
        .cluster(&fake, Role::ReadOnly)
        .run();
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.first().is_some_and(|c| *c == "k3s" || *c == "k3s-etcd") && f.len() >= 4)
        .filter(|f| f[1] == "ghost")
        .collect();
    assert_eq!(rows.len(), 2, "{}", out.stdout);
    for row in rows {
        assert_eq!(row[2], "<none>", "{}", out.stdout);
    }
}
