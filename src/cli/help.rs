//! Help texts: the exit-code table and the examples every subcommand's `--help` ends with.

/// The exit codes and what each means (README's and docs/exit-codes.md's table).
pub const EXIT_CODES: [(u8, &str); 5] = [
    (0, "healthy / no differences / repair done and verified"),
    (
        1,
        "findings at or above --fail-on remain (diff found differences; plan not applied; user declined)",
    ),
    (
        2,
        "usage error or refused request (e.g. --fix without a TTY and without --yes, --fix on a dump)",
    ),
    (
        3,
        "could not read the cluster or the input (unreachable, TLS, 401/403, bad dump file)",
    ),
    (
        4,
        "a repair was attempted but not completed or not verified",
    ),
];

/// What the table alone does not say, one paragraph each.
pub const EXIT_CODE_NOTES: [&str; 2] = [
    "One rule for every repair (--fix): exit 4 only when the write did not happen or was not \
     verified; after a verified write the exit code is the verdict of the cluster read again, \
     under --fail-on (default error), exactly as the read-only commands compute it (0 healthy, \
     1 findings remain).",
    "Several clusters at once (check and leases with --all-contexts, --contexts REGEX or \
     --context given more than once): 3 if any selected cluster could not be read \
     (--ignore-unreachable makes that a warning), else 1 if any cluster has findings at or \
     above --fail-on, else 0; --fix with several contexts is refused (2).",
];

/// Where a code's meaning starts: `  0  healthy …`, and its continuation lines under it.
const CODE_INDENT: &str = "     ";

/// The exit codes as the top-level `--help` ends, wrapped to `width` here, once, with each
/// meaning hanging under its first line. clap wraps after-help text again, keeping only a
/// line's leading blanks; lines that already fit are left alone, so `width` must be the one
/// clap uses (see [`help_width`]).
pub(super) fn exit_codes_text(width: usize) -> String {
    use crate::render::wrap::wrap_to;
    let mut text = String::from("Exit codes:\n");
    for (code, meaning) in EXIT_CODES {
        for line in wrap_to(meaning, &format!("  {code}  "), CODE_INDENT, width) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    for note in EXIT_CODE_NOTES {
        text.push('\n');
        for line in wrap_to(note, "", "", width) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text.trim_end().to_string()
}

/// The width clap lays `--help` out in (a terminal on stdout, else `COLUMNS`, else 100), at
/// most 100 columns: longer lines are hard to read.
pub fn help_width() -> usize {
    const WIDEST: usize = 100;
    let terminal = terminal_size::terminal_size_of(std::io::stdout())
        .map(|(terminal_size::Width(w), _)| usize::from(w))
        .filter(|&w| w > 0);
    let columns = || {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse::<usize>().ok())
            .filter(|&w| w > 0)
    };
    terminal.or_else(columns).unwrap_or(WIDEST).min(WIDEST)
}

/// The top-level `--help` ends like the subcommands' do: with examples, then the exit codes
/// (added when the command is built, wrapped to the terminal: [`exit_codes_text`]).
pub(super) const TOP_EXAMPLES: &str = "\
Examples:
  # Every check on the current kubectl context: locks, snapshots, etcd members
  k3sdoctor check

  # Who holds the k3s and k3s-etcd locks, on a dump instead of a live cluster
  k3sdoctor --from-file support-bundle/ leases

  # Repair a split after a dry run and a confirmation, then verify the takeover
  k3sdoctor leases follow --fix

  # For monitoring: JSON on stdout, exit 1 on warnings too
  k3sdoctor check -o json --fail-on warning";

pub(super) const FOLLOW_EXAMPLES: &str = "\
Examples:
  # Show what would move, its impact and the safety checks; writes nothing
  k3sdoctor leases follow

  # Move k3s onto the k3s-etcd holder, after a dry run and a confirmation,
  # and verify the takeover
  k3sdoctor leases follow --fix

  # Non-interactive, onto a named server
  k3sdoctor leases follow --fix --yes --to prod-k3s-2";

pub(super) const CHECK_EXAMPLES: &str = "\
Examples:
  # Everything, on the current kubectl context
  k3sdoctor check

  # A customer's dump (a directory of kubectl get -o yaml files)
  k3sdoctor --from-file support-bundle/ check

  # From cron or a CronJob: JSON for the log, exit 1 on warnings too
  k3sdoctor check -o json --fail-on warning

  # Every cluster of the kubeconfig at once, worst first (docs/fleets.md)
  k3sdoctor check --all-contexts";

pub(super) const DUMP_ABOUT: &str = "\
Write everything check reads into a folder or a .tar.gz: the objects (Secrets as metadata only,
never their data), each server's /metrics answer as metrics/apiserver/<node>.txt and etcd's as
metrics/etcd/<node>.txt, and manifest.json: what was read and what was refused, and why.
`k3sdoctor --from-file PATH check` reads it back. Nothing is written to the cluster; the output
appears only once complete (an interrupted dump leaves nothing behind).";

pub(super) const DUMP_EXAMPLES: &str = "\
Examples:
  # The current context, into k3sdoctor-dump-<time>.tar.gz
  k3sdoctor dump

  # Into a folder, then judge it (here or on another machine)
  k3sdoctor dump ./cluster-dump
  k3sdoctor --from-file ./cluster-dump check";

pub(super) const SNAPSHOTS_EXAMPLES: &str = "\
Examples:
  k3sdoctor snapshots list
  k3sdoctor snapshots diff -o json
  k3sdoctor snapshots backfill --fix";

pub(super) const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  k3sdoctor completions bash > /etc/bash_completion.d/k3sdoctor
  k3sdoctor completions zsh > \"${fpath[1]}/_k3sdoctor\"";

pub(super) const RBAC_EXAMPLES: &str = "\
Examples:
  # What check, leases, snapshots list|diff and serve need, applied and
  # bound to alice
  k3sdoctor rbac read-only | kubectl apply -f -
  kubectl create clusterrolebinding k3sdoctor-read-only \\
    --clusterrole k3sdoctor-read-only --user alice
  kubectl -n default create rolebinding k3sdoctor-read-only \\
    --role k3sdoctor-read-only --user alice

  # Add what leases follow --fix and snapshots backfill --fix write with
  k3sdoctor rbac repair | kubectl apply -f -
  kubectl -n kube-system create rolebinding k3sdoctor-repair \\
    --role k3sdoctor-repair --user alice

  # Opt in to the node password and serving certificate checks (list
  # secrets in kube-system: RBAC cannot narrow it to metadata)
  k3sdoctor rbac secrets-metadata | kubectl apply -f -
  kubectl -n kube-system create rolebinding k3sdoctor-secrets-metadata \\
    --role k3sdoctor-secrets-metadata --user alice";

pub(super) const OPTIONS_EXAMPLES: &str = "\
Examples:
  k3sdoctor options
  k3sdoctor options | grep -A1 -- --context";

pub(super) const VERSION_EXAMPLES: &str = "\
Examples:
  # The version, commit, build date, rustc, target and features
  k3sdoctor version

  # The same as JSON (kind: Version), e.g. for an inventory
  k3sdoctor version -o json";

/// The last line of every subcommand's help, which leaves the global options out.
pub(super) const SEE_OPTIONS: &str = "Use `k3sdoctor options` for the global options (they apply to every command that reads a cluster or prints a report).";

pub(super) const MAN_EXAMPLES: &str = "\
Examples:
  k3sdoctor man | man -l -
  k3sdoctor man --out-dir /usr/local/share/man/man1";

pub(super) const SNAPSHOTS_LIST_EXAMPLES: &str = "\
Examples:
  # Every snapshot and whether Rancher can see it in the ConfigMap
  k3sdoctor snapshots list

  # The same from a support bundle
  k3sdoctor --from-file bundle/ snapshots list -o wide";

pub(super) const SNAPSHOTS_DIFF_EXAMPLES: &str = "\
Examples:
  # What is missing, orphaned or stale, and why (exit 1 on differences,
  # like kubectl diff)
  k3sdoctor snapshots diff

  # Machine-readable
  k3sdoctor snapshots diff -o json";

pub(super) const SNAPSHOTS_BACKFILL_EXAMPLES: &str = "\
Examples:
  # Show the entries that would be written; writes nothing
  k3sdoctor snapshots backfill

  # Write them (backup, dry run, confirmation), also removing orphaned entries
  k3sdoctor snapshots backfill --fix --prune

  # Non-interactive, with the backup in a chosen place
  k3sdoctor snapshots backfill --fix --yes \\
    --backup /root/k3s-etcd-snapshots.json";

pub(super) const SNAPSHOTS_RESTORE_EXAMPLES: &str = "\
Examples:
  # Show what restoring the backup would change; writes nothing
  k3sdoctor snapshots restore \\
    --from-backup k3s-etcd-snapshots.1234.backup.json

  # Restore it (the current ConfigMap is saved first; dry run, confirmation,
  # verified)
  k3sdoctor snapshots restore --fix \\
    --from-backup k3s-etcd-snapshots.1234.backup.json";

pub(super) const LEASES_EXAMPLES: &str = "\
Examples:
  # Who holds k3s and k3s-etcd on the current kubectl context
  k3sdoctor leases

  # For monitoring: JSON, and a non-zero exit on warnings too
  k3sdoctor leases -o json --fail-on warning

  # Keep watching: the table, then one line per holder or state change
  # (Ctrl-C to stop; -o json streams one LeaseChange object per line)
  k3sdoctor leases --watch

  # Repair a split: see `k3sdoctor leases follow --help`
  k3sdoctor leases follow --fix";

pub(super) const SERVE_ABOUT: &str = "\
Keep the objects check reads in memory through watches (kube-system Leases, the lock, \
snapshot and extra-metadata ConfigMaps, Nodes, ETCDSnapshotFiles), run the same checks whenever \
they change, and serve the verdicts over HTTP for Prometheus. Inside a pod it uses the \
in-cluster config. A watch that fails (a 403, a CRD that is not installed, a dropped \
connection) is logged and counted in k3sdoctor_watch_errors_total and retried with backoff; \
it never ends the process. SIGTERM or SIGINT ends it (exit 0).

Endpoints: /metrics (OpenMetrics text), /healthz (200 while the process runs), /readyz (200 \
once every watch has listed its objects, else 503), /report (the latest CheckReport, JSON).

Metrics (docs/monitoring.md):
  k3sdoctor_up
      1 when the last evaluation read everything it needs
  k3sdoctor_ready
      1 once every watch has listed its objects
  k3sdoctor_findings{code,severity}
      findings of the last evaluation, per code
  k3sdoctor_lease_split{lock,affected}
      1 while the two locks are split; affected: true, false or unknown
  k3sdoctor_lease_holder_info{lock,holder,node}
      1 per held lock
  k3sdoctor_lease_renew_age_seconds{lock}
      seconds since the holder last renewed the lock
  k3sdoctor_snapshot_entries{state}
      missing, orphaned, stale, pruned_for_size
  k3sdoctor_etcd_members{state}
      ready, not_ready
  k3sdoctor_last_evaluation_timestamp_seconds
      when the last evaluation ran
  k3sdoctor_evaluation_duration_seconds
      how long one evaluation took (histogram)
  k3sdoctor_watch_synced{resource}
      1 once that watch has listed its objects
  k3sdoctor_watch_errors_total{resource,reason}
      failed watch attempts: forbidden, unauthorized, not_found, other
  k3sdoctor_build_info{version}
      1, with the running version";

pub(super) const SERVE_EXAMPLES: &str = "\
Examples:
  # On a workstation, against the current kubectl context
  k3sdoctor serve --listen 127.0.0.1:9810

  # In a pod (deploy/kustomization.yaml): JSON logs for the log pipeline
  k3sdoctor serve --listen 0.0.0.0:9810 --log-format json";

/// Every subcommand's help leaves the global options out and ends pointing to `options`,
/// as kubectl's does: twenty-odd flags repeated under every command hid
/// the few that command has. Only help changes: man pages and completions still list every
/// flag a command takes (they are built from `cli::command`), and parsing is the same.
pub(super) fn global_options_once(command: clap::Command, name: &str) -> clap::Command {
    fn below(mut command: clap::Command, pointer: &str) -> clap::Command {
        let names: Vec<String> = command
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .filter(|n| n != "help")
            .collect();
        for sub in names {
            command = command.mut_subcommand(sub, |mut s| {
                let globals: Vec<String> = s
                    .get_arguments()
                    .filter(|a| a.is_global_set())
                    .map(|a| a.get_id().to_string())
                    .collect();
                for id in globals {
                    // `-o` and `--no-headers` stay: the formats differ per command, and
                    // kubectl's get shows them as its own.
                    s = s.mut_arg(&id, |a| {
                        if super::flag_layout::REPORT.contains(&id.as_str()) {
                            a.help_heading("Output options")
                        } else {
                            a.hide_short_help(true).hide_long_help(true)
                        }
                    });
                }
                let long = s
                    .get_after_long_help()
                    .map(|h| format!("{h}\n\n{pointer}"))
                    .unwrap_or_else(|| pointer.to_string());
                s = s.after_help(pointer.to_string()).after_long_help(long);
                below(s, pointer)
            });
        }
        command
    }
    below(
        command,
        &SEE_OPTIONS.replace("k3sdoctor ", &format!("{name} ")),
    )
}
