
use builtin;
use str;

set edit:completion:arg-completer[k3sdoctor] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'k3sdoctor'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'k3sdoctor'= {
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand leases 'Who holds each k3s/RKE2 leader lock, is it fresh, is there a split, does it matter here'
            cand check 'Every check at once: leases, snapshots, etcd membership; findings linked to their cause'
            cand snapshots 'ETCDSnapshotFiles against the <prog>-etcd-snapshots ConfigMap, by k3s''s own rules'
            cand serve 'Keep watching and export the verdicts for Prometheus: /metrics, /healthz, /readyz, /report'
            cand completions 'Print a shell completion script'
            cand rbac 'Print the RBAC roles a use needs, as YAML for kubectl apply -f -'
            cand man 'Print the man page, or write all man pages into a directory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'k3sdoctor;leases'= {
            cand --contexts 'Read the contexts whose name matches this regular expression (anywhere in the name; anchor it with ^ and $)'
            cand --parallel 'Read at most this many clusters at once [default: 16]'
            cand --fail-on 'Exit 1 when a finding of at least this severity remains'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand --all-contexts 'Read every context of the kubeconfig (the KUBECONFIG files merged as kubectl merges them)'
            cand --ignore-unreachable 'A cluster that cannot be read is a warning row instead of exit 3'
            cand -w 'Print the table, then one line per change (holder, state, transitions) until interrupted; with -o json|yaml, one LeaseChange document per change'
            cand --watch 'Print the table, then one line per change (holder, state, transitions) until interrupted; with -o json|yaml, one LeaseChange document per change'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand follow 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'k3sdoctor;leases;follow'= {
            cand --to 'The node (name or hostname) that should hold the lock (default: the holder of the other k3s lock)'
            cand --lease 'The lock to move: <prog> (default) or <prog>-etcd'
            cand --timeout 'How long to wait for the takeover (default: the lock record''s lease duration plus its renew deadline, 75s for wrangler''s 45s/30s, at least 30s and at most 10m)'
            cand --fail-on 'After a verified write, exit 1 when a finding of at least this severity remains'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand --fix 'Write the change (after a server-side dry run and confirmation); without it only the plan is shown'
            cand -y 'Do not ask for confirmation (needed without a terminal)'
            cand --yes 'Do not ask for confirmation (needed without a terminal)'
            cand --no-wait 'Do not wait for the target to take the lock over'
            cand --force 'Skip the target, etcd-quorum and split checks (never the permission check)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;leases;help'= {
            cand follow 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'k3sdoctor;leases;help;follow'= {
        }
        &'k3sdoctor;leases;help;help'= {
        }
        &'k3sdoctor;check'= {
            cand --fail-on 'Exit 1 when a finding of at least this severity remains'
            cand --ignore 'Report findings with this code (on OBJECT only, e.g. node/server-1) as ignored: listed, never counted in the exit code or alerts. Repeatable'
            cand --config 'A YAML file with an `ignore:` list of CODE[=OBJECT] (default, when it exists: $XDG_CONFIG_HOME/k3sdoctor/config.yaml, else ~/.config/k3sdoctor/config.yaml)'
            cand --contexts 'Read the contexts whose name matches this regular expression (anywhere in the name; anchor it with ^ and $)'
            cand --parallel 'Read at most this many clusters at once [default: 16]'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand --all-contexts 'Read every context of the kubeconfig (the KUBECONFIG files merged as kubectl merges them)'
            cand --ignore-unreachable 'A cluster that cannot be read is a warning row instead of exit 3'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;snapshots'= {
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand list 'One row per snapshot: node, storage, size, and the state of its ConfigMap entry'
            cand diff 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences'
            cand backfill 'Write the missing and stale entries exactly as k3s would (with --fix)'
            cand restore 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'k3sdoctor;snapshots;list'= {
            cand --fail-on 'Exit 1 when a finding of at least this severity remains'
            cand --node 'Only snapshots taken (or uploaded) by this node'
            cand --storage 'Only snapshots stored locally on their node, or in S3'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand --failed 'Only failed snapshots (readyToUse false with an error)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;snapshots;diff'= {
            cand --fail-on 'Exit 1 when a finding of at least this severity remains (default: on any difference, like kubectl diff, or any error)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;snapshots;backfill'= {
            cand --backup 'Where to save the ConfigMap before changing it (default: ./<configmap>.<resourceVersion>.backup.json); undo with `snapshots restore --from-backup FILE --fix`'
            cand --fail-on 'After a verified write, exit 1 when a finding of at least this severity remains'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand --fix 'Write the change (after a backup, a server-side dry run and confirmation); without it only the plan is shown'
            cand --prune 'Also remove entries that have no ETCDSnapshotFile behind them'
            cand -y 'Do not ask for confirmation (needed without a terminal)'
            cand --yes 'Do not ask for confirmation (needed without a terminal)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;snapshots;restore'= {
            cand --from-backup 'The backup file `snapshots backfill --fix` saved (it prints its path)'
            cand --backup 'Where to save the current ConfigMap before restoring (default: ./<configmap>.<resourceVersion>.backup.json)'
            cand --fail-on 'After a verified write, exit 1 when a finding of at least this severity remains'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand --fix 'Write the change (after a backup of the current ConfigMap, a server-side dry run and confirmation); without it only the plan is shown'
            cand -y 'Do not ask for confirmation (needed without a terminal)'
            cand --yes 'Do not ask for confirmation (needed without a terminal)'
            cand --force 'Restore a backup that cannot be confirmed as this very ConfigMap''s (it was recreated since, or the backup or the role cannot show the cluster''s identity); another cluster''s backup is refused even so'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;snapshots;help'= {
            cand list 'One row per snapshot: node, storage, size, and the state of its ConfigMap entry'
            cand diff 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences'
            cand backfill 'Write the missing and stale entries exactly as k3s would (with --fix)'
            cand restore 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'k3sdoctor;snapshots;help;list'= {
        }
        &'k3sdoctor;snapshots;help;diff'= {
        }
        &'k3sdoctor;snapshots;help;backfill'= {
        }
        &'k3sdoctor;snapshots;help;restore'= {
        }
        &'k3sdoctor;snapshots;help;help'= {
        }
        &'k3sdoctor;serve'= {
            cand --listen 'The address and port to serve the endpoints on'
            cand --log-format 'How to write the log on stderr: text, or one JSON object per line'
            cand --ignore 'Report findings with this code (on OBJECT only, e.g. node/server-1) as ignored: listed, never counted in the exit code or alerts. Repeatable'
            cand --config 'A YAML file with an `ignore:` list of CODE[=OBJECT] (default, when it exists: $XDG_CONFIG_HOME/k3sdoctor/config.yaml, else ~/.config/k3sdoctor/config.yaml)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)'
            cand --context 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)'
            cand --request-timeout 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)'
            cand -o 'Output format'
            cand --output 'Output format'
            cand --distro 'Which product runs the cluster (auto: from the lock names, then the node versions)'
            cand --from-file 'Read objects from a file or directory of `kubectl get -o yaml|json` output instead of a cluster. Repeatable'
            cand --now 'The time to judge freshness against, RFC 3339 (default: the local clock; for a dump, its newest timestamp)'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;completions'= {
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;rbac'= {
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;man'= {
            cand --out-dir 'Write k3sdoctor.1 and one page per subcommand into this directory'
            cand --color 'When to use colours (NO_COLOR is honoured with auto)'
            cand -v 'More detail on stderr: -v request trace and error causes, -vv more'
            cand --verbose 'More detail on stderr: -v request trace and error causes, -vv more'
            cand -q 'Print nothing for table output; rely on the exit code'
            cand --quiet 'Print nothing for table output; rely on the exit code'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'k3sdoctor;help'= {
            cand leases 'Who holds each k3s/RKE2 leader lock, is it fresh, is there a split, does it matter here'
            cand check 'Every check at once: leases, snapshots, etcd membership; findings linked to their cause'
            cand snapshots 'ETCDSnapshotFiles against the <prog>-etcd-snapshots ConfigMap, by k3s''s own rules'
            cand serve 'Keep watching and export the verdicts for Prometheus: /metrics, /healthz, /readyz, /report'
            cand completions 'Print a shell completion script'
            cand rbac 'Print the RBAC roles a use needs, as YAML for kubectl apply -f -'
            cand man 'Print the man page, or write all man pages into a directory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'k3sdoctor;help;leases'= {
            cand follow 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover'
        }
        &'k3sdoctor;help;leases;follow'= {
        }
        &'k3sdoctor;help;check'= {
        }
        &'k3sdoctor;help;snapshots'= {
            cand list 'One row per snapshot: node, storage, size, and the state of its ConfigMap entry'
            cand diff 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences'
            cand backfill 'Write the missing and stale entries exactly as k3s would (with --fix)'
            cand restore 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)'
        }
        &'k3sdoctor;help;snapshots;list'= {
        }
        &'k3sdoctor;help;snapshots;diff'= {
        }
        &'k3sdoctor;help;snapshots;backfill'= {
        }
        &'k3sdoctor;help;snapshots;restore'= {
        }
        &'k3sdoctor;help;serve'= {
        }
        &'k3sdoctor;help;completions'= {
        }
        &'k3sdoctor;help;rbac'= {
        }
        &'k3sdoctor;help;man'= {
        }
        &'k3sdoctor;help;help'= {
        }
    ]
    $completions[$command]
}
