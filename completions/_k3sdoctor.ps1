
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'k3sdoctor' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'k3sdoctor'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'k3sdoctor' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('leases', 'leases', [CompletionResultType]::ParameterValue, 'Who holds each k3s/RKE2 leader lock, is it fresh, is there a split, does it matter here')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Every check at once: leases, snapshots, etcd membership; findings linked to their cause')
            [CompletionResult]::new('snapshots', 'snapshots', [CompletionResultType]::ParameterValue, 'ETCDSnapshotFiles against the <prog>-etcd-snapshots ConfigMap, by k3s''s own rules')
            [CompletionResult]::new('dump', 'dump', [CompletionResultType]::ParameterValue, 'Write everything check reads into a folder or a .tar.gz, for --from-file later or elsewhere')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Keep watching and export the verdicts for Prometheus: /metrics, /healthz, /readyz, /report')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('rbac', 'rbac', [CompletionResultType]::ParameterValue, 'Print the RBAC roles a use needs, as YAML for kubectl apply -f -')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write all man pages into a directory')
            [CompletionResult]::new('options', 'options', [CompletionResultType]::ParameterValue, 'Print the global options, which every command''s help leaves out (as `kubectl options`)')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version, the git commit it was built from, build date, rustc, target and features')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'k3sdoctor;leases' {
            [CompletionResult]::new('--contexts', '--contexts', [CompletionResultType]::ParameterName, 'Read the contexts whose name matches this regular expression (anywhere in the name; anchor it with ^ and $)')
            [CompletionResult]::new('--rancher-clusters', '--rancher-clusters', [CompletionResultType]::ParameterName, 'Read every cluster Rancher manages whose name or id matches REGEX (all without it), through Rancher''s proxy with the current Rancher context''s credentials')
            [CompletionResult]::new('--parallel', '--parallel', [CompletionResultType]::ParameterName, 'Read at most this many clusters at once [default: 16]')
            [CompletionResult]::new('--cluster-timeout', '--cluster-timeout', [CompletionResultType]::ParameterName, 'With --rancher-clusters: how long a cluster may take to give its first answer through Rancher before it is reported unreachable (Rancher takes 20-40 s to say that a cluster''s agent is disconnected; 0 = no limit) [default: 10s]')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding of at least this severity remains')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--all-contexts', '--all-contexts', [CompletionResultType]::ParameterName, 'Read every context of the kubeconfig (the KUBECONFIG files merged as kubectl merges them)')
            [CompletionResult]::new('--ignore-unreachable', '--ignore-unreachable', [CompletionResultType]::ParameterName, 'A cluster that cannot be read is a warning row instead of exit 3')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Print the table, then one line per change (holder, state, transitions) until interrupted; with -o json|yaml, one LeaseChange document per change')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Print the table, then one line per change (holder, state, transitions) until interrupted; with -o json|yaml, one LeaseChange document per change')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('follow', 'follow', [CompletionResultType]::ParameterValue, 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'k3sdoctor;leases;follow' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The node (name or hostname) that should hold the lock (default: the holder of the other k3s lock)')
            [CompletionResult]::new('--lease', '--lease', [CompletionResultType]::ParameterName, 'The lock to move: <prog> (default) or <prog>-etcd')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long to wait for the takeover (default: the lock record''s lease duration plus its renew deadline, 75s for wrangler''s 45s/30s, at least 30s and at most 10m)')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'After a verified write, exit 1 when a finding of at least this severity remains')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--fix', '--fix', [CompletionResultType]::ParameterName, 'Write the change (after a server-side dry run and confirmation); without it only the plan is shown')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed without a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed without a terminal)')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Do not wait for the target to take the lock over')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Skip the target, etcd-quorum and split checks (never the permission check)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;leases;help' {
            [CompletionResult]::new('follow', 'follow', [CompletionResultType]::ParameterValue, 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'k3sdoctor;leases;help;follow' {
            break
        }
        'k3sdoctor;leases;help;help' {
            break
        }
        'k3sdoctor;check' {
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding of at least this severity remains')
            [CompletionResult]::new('--ignore', '--ignore', [CompletionResultType]::ParameterName, 'Report findings with this code (on OBJECT only, e.g. node/server-1) as ignored: listed, never counted in the exit code or alerts. Repeatable')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A YAML file with an `ignore:` list of CODE[=OBJECT] (default, when it exists: $XDG_CONFIG_HOME/k3sdoctor/config.yaml, else ~/.config/k3sdoctor/config.yaml)')
            [CompletionResult]::new('--contexts', '--contexts', [CompletionResultType]::ParameterName, 'Read the contexts whose name matches this regular expression (anywhere in the name; anchor it with ^ and $)')
            [CompletionResult]::new('--rancher-clusters', '--rancher-clusters', [CompletionResultType]::ParameterName, 'Read every cluster Rancher manages whose name or id matches REGEX (all without it), through Rancher''s proxy with the current Rancher context''s credentials')
            [CompletionResult]::new('--parallel', '--parallel', [CompletionResultType]::ParameterName, 'Read at most this many clusters at once [default: 16]')
            [CompletionResult]::new('--cluster-timeout', '--cluster-timeout', [CompletionResultType]::ParameterName, 'With --rancher-clusters: how long a cluster may take to give its first answer through Rancher before it is reported unreachable (Rancher takes 20-40 s to say that a cluster''s agent is disconnected; 0 = no limit) [default: 10s]')
            [CompletionResult]::new('--rancher-context', '--rancher-context', [CompletionResultType]::ParameterName, 'Read Rancher''s management cluster through this kubeconfig context (default: when the context''s server is a Rancher proxy URL, …/k8s/clusters/local with the same credentials)')
            [CompletionResult]::new('--rancher-from-file', '--rancher-from-file', [CompletionResultType]::ParameterName, 'Read Rancher''s management-cluster objects from a dump or the Rancher logs collector''s bundle, beside --from-file. Repeatable')
            [CompletionResult]::new('--rancher-cluster', '--rancher-cluster', [CompletionResultType]::ParameterName, 'The Rancher cluster to compare with, when the management cluster holds several: its name, namespace/name, c-m- id or display name')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--all-contexts', '--all-contexts', [CompletionResultType]::ParameterName, 'Read every context of the kubeconfig (the KUBECONFIG files merged as kubectl merges them)')
            [CompletionResult]::new('--ignore-unreachable', '--ignore-unreachable', [CompletionResultType]::ParameterName, 'A cluster that cannot be read is a warning row instead of exit 3')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;snapshots' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'One row per snapshot: node, state, age, size, and the state of its ConfigMap entry (the default)')
            [CompletionResult]::new('ls', 'ls', [CompletionResultType]::ParameterValue, 'One row per snapshot: node, state, age, size, and the state of its ConfigMap entry (the default)')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences')
            [CompletionResult]::new('backfill', 'backfill', [CompletionResultType]::ParameterValue, 'Write the missing and stale entries exactly as k3s would (with --fix)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'k3sdoctor;snapshots;list' {
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding of at least this severity remains')
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'Only snapshots taken (or uploaded) by this node')
            [CompletionResult]::new('--storage', '--storage', [CompletionResultType]::ParameterName, 'Only snapshots stored locally on their node, or in S3')
            [CompletionResult]::new('--rancher-context', '--rancher-context', [CompletionResultType]::ParameterName, 'Read Rancher''s management cluster through this kubeconfig context (default: when the context''s server is a Rancher proxy URL, …/k8s/clusters/local with the same credentials)')
            [CompletionResult]::new('--rancher-from-file', '--rancher-from-file', [CompletionResultType]::ParameterName, 'Read Rancher''s management-cluster objects from a dump or the Rancher logs collector''s bundle, beside --from-file. Repeatable')
            [CompletionResult]::new('--rancher-cluster', '--rancher-cluster', [CompletionResultType]::ParameterName, 'The Rancher cluster to compare with, when the management cluster holds several: its name, namespace/name, c-m- id or display name')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--failed', '--failed', [CompletionResultType]::ParameterName, 'Only failed snapshots (readyToUse false with an error)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;snapshots;ls' {
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding of at least this severity remains')
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'Only snapshots taken (or uploaded) by this node')
            [CompletionResult]::new('--storage', '--storage', [CompletionResultType]::ParameterName, 'Only snapshots stored locally on their node, or in S3')
            [CompletionResult]::new('--rancher-context', '--rancher-context', [CompletionResultType]::ParameterName, 'Read Rancher''s management cluster through this kubeconfig context (default: when the context''s server is a Rancher proxy URL, …/k8s/clusters/local with the same credentials)')
            [CompletionResult]::new('--rancher-from-file', '--rancher-from-file', [CompletionResultType]::ParameterName, 'Read Rancher''s management-cluster objects from a dump or the Rancher logs collector''s bundle, beside --from-file. Repeatable')
            [CompletionResult]::new('--rancher-cluster', '--rancher-cluster', [CompletionResultType]::ParameterName, 'The Rancher cluster to compare with, when the management cluster holds several: its name, namespace/name, c-m- id or display name')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--failed', '--failed', [CompletionResultType]::ParameterName, 'Only failed snapshots (readyToUse false with an error)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;snapshots;diff' {
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding of at least this severity remains (default: on any difference, like kubectl diff, or any error)')
            [CompletionResult]::new('--rancher-context', '--rancher-context', [CompletionResultType]::ParameterName, 'Read Rancher''s management cluster through this kubeconfig context (default: when the context''s server is a Rancher proxy URL, …/k8s/clusters/local with the same credentials)')
            [CompletionResult]::new('--rancher-from-file', '--rancher-from-file', [CompletionResultType]::ParameterName, 'Read Rancher''s management-cluster objects from a dump or the Rancher logs collector''s bundle, beside --from-file. Repeatable')
            [CompletionResult]::new('--rancher-cluster', '--rancher-cluster', [CompletionResultType]::ParameterName, 'The Rancher cluster to compare with, when the management cluster holds several: its name, namespace/name, c-m- id or display name')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;snapshots;backfill' {
            [CompletionResult]::new('--backup', '--backup', [CompletionResultType]::ParameterName, 'Where to save the ConfigMap before changing it (default: ./<configmap>.<resourceVersion>.backup.json); undo with `snapshots restore --from-backup FILE --fix`')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'After a verified write, exit 1 when a finding of at least this severity remains')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--fix', '--fix', [CompletionResultType]::ParameterName, 'Write the change (after a backup, a server-side dry run and confirmation); without it only the plan is shown')
            [CompletionResult]::new('--prune', '--prune', [CompletionResultType]::ParameterName, 'Also remove entries that have no ETCDSnapshotFile behind them')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed without a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed without a terminal)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;snapshots;restore' {
            [CompletionResult]::new('--from-backup', '--from-backup', [CompletionResultType]::ParameterName, 'The backup file `snapshots backfill --fix` saved (it prints its path)')
            [CompletionResult]::new('--backup', '--backup', [CompletionResultType]::ParameterName, 'Where to save the current ConfigMap before restoring (default: ./<configmap>.<resourceVersion>.backup.json)')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'After a verified write, exit 1 when a finding of at least this severity remains')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--from-file', '--from-file', [CompletionResultType]::ParameterName, 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable')
            [CompletionResult]::new('--max-bundle-size', '--max-bundle-size', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)')
            [CompletionResult]::new('--max-bundle-entries', '--max-bundle-entries', [CompletionResultType]::ParameterName, 'Stop reading a support bundle past this many entries (in archives, and files and folders under a folder)')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--fix', '--fix', [CompletionResultType]::ParameterName, 'Write the change (after a backup of the current ConfigMap, a server-side dry run and confirmation); without it only the plan is shown')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed without a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (needed without a terminal)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Restore a backup that cannot be confirmed as this very ConfigMap''s (it was recreated since, or the backup or the role cannot show the cluster''s identity); another cluster''s backup is refused even so')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;snapshots;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'One row per snapshot: node, state, age, size, and the state of its ConfigMap entry (the default)')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences')
            [CompletionResult]::new('backfill', 'backfill', [CompletionResultType]::ParameterValue, 'Write the missing and stale entries exactly as k3s would (with --fix)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'k3sdoctor;snapshots;help;list' {
            break
        }
        'k3sdoctor;snapshots;help;diff' {
            break
        }
        'k3sdoctor;snapshots;help;backfill' {
            break
        }
        'k3sdoctor;snapshots;help;restore' {
            break
        }
        'k3sdoctor;snapshots;help;help' {
            break
        }
        'k3sdoctor;dump' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;serve' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'The address and port to serve the endpoints on (`:9810`: every interface, as in Go)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How to write the log on stderr: text, or one JSON object per line')
            [CompletionResult]::new('--ignore', '--ignore', [CompletionResultType]::ParameterName, 'Report findings with this code (on OBJECT only, e.g. node/server-1) as ignored: listed, never counted in the exit code or alerts. Repeatable')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A YAML file with an `ignore:` list of CODE[=OBJECT] (default, when it exists: $XDG_CONFIG_HOME/k3sdoctor/config.yaml, else ~/.config/k3sdoctor/config.yaml)')
            [CompletionResult]::new('--metrics-auth', '--metrics-auth', [CompletionResultType]::ParameterName, 'Who may read /metrics and /report: kubernetes (a bearer token the API server accepts, of an account allowed to get the path: a TokenReview and a SubjectAccessReview, cached briefly) or none (anyone who reaches the port). /healthz and /readyz are always open. docs/monitoring.md')
            [CompletionResult]::new('--heal', '--heal', [CompletionResultType]::ParameterName, 'Repair a split unattended: off, dry-run (gates, plan and one WouldMoveLock Event per split, no write) or on (the move leases follow --fix makes, after --heal-after, when every gate holds). docs/heal.md')
            [CompletionResult]::new('--rancher-clusters', '--rancher-clusters', [CompletionResultType]::ParameterName, 'Watch every cluster Rancher manages whose name or id matches REGEX (all without it) instead of one cluster: checked in rounds through Rancher''s proxy with the Rancher context''s credentials, every series labelled with `cluster`. docs/rancher.md')
            [CompletionResult]::new('--interval', '--interval', [CompletionResultType]::ParameterName, 'With --rancher-clusters: how often a round checks every cluster [default: 60s]')
            [CompletionResult]::new('--heal-after', '--heal-after', [CompletionResultType]::ParameterName, 'How long a split must last (on the API server''s clock, across at least three evaluations) before it is healed')
            [CompletionResult]::new('--heal-cooldown', '--heal-cooldown', [CompletionResultType]::ParameterName, 'At most one heal per this period; a split back within it is reported, not healed, and the period doubles (up to 24h; reset after a day without a split)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the API server, in place of the kubeconfig''s')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, in place of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, in place of the context''s')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for the API server, in place of the user''s credentials')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file (PEM) to verify the API server with')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'The user to impersonate (needs the `impersonate` verb)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'A group to impersonate; repeatable; needs --as')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl''s -n, for muscle memory)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)')
            [CompletionResult]::new('--distro', '--distro', [CompletionResultType]::ParameterName, 'Which product runs the cluster (auto: from the lock names, then the node versions)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the API server''s certificate (insecure)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;rbac' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;man' {
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Write k3sdoctor.1 and one page per subcommand into this directory')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;options' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;version' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail on stderr: -v what was read (one line per read or dump) and error causes; -vv also every HTTP request (method, URL, status); -vvv also timings')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing for table output; rely on the exit code')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print only the rows of tables, as kubectl''s --no-headers: no header line, and the summary, findings and verdict on stderr (as whenever stdout is not a terminal); the exit code still carries the verdict')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'k3sdoctor;help' {
            [CompletionResult]::new('leases', 'leases', [CompletionResultType]::ParameterValue, 'Who holds each k3s/RKE2 leader lock, is it fresh, is there a split, does it matter here')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Every check at once: leases, snapshots, etcd membership; findings linked to their cause')
            [CompletionResult]::new('snapshots', 'snapshots', [CompletionResultType]::ParameterValue, 'ETCDSnapshotFiles against the <prog>-etcd-snapshots ConfigMap, by k3s''s own rules')
            [CompletionResult]::new('dump', 'dump', [CompletionResultType]::ParameterValue, 'Write everything check reads into a folder or a .tar.gz, for --from-file later or elsewhere')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Keep watching and export the verdicts for Prometheus: /metrics, /healthz, /readyz, /report')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('rbac', 'rbac', [CompletionResultType]::ParameterValue, 'Print the RBAC roles a use needs, as YAML for kubectl apply -f -')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write all man pages into a directory')
            [CompletionResult]::new('options', 'options', [CompletionResultType]::ParameterValue, 'Print the global options, which every command''s help leaves out (as `kubectl options`)')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version, the git commit it was built from, build date, rustc, target and features')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'k3sdoctor;help;leases' {
            [CompletionResult]::new('follow', 'follow', [CompletionResultType]::ParameterValue, 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover')
            break
        }
        'k3sdoctor;help;leases;follow' {
            break
        }
        'k3sdoctor;help;check' {
            break
        }
        'k3sdoctor;help;snapshots' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'One row per snapshot: node, state, age, size, and the state of its ConfigMap entry (the default)')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences')
            [CompletionResult]::new('backfill', 'backfill', [CompletionResultType]::ParameterValue, 'Write the missing and stale entries exactly as k3s would (with --fix)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)')
            break
        }
        'k3sdoctor;help;snapshots;list' {
            break
        }
        'k3sdoctor;help;snapshots;diff' {
            break
        }
        'k3sdoctor;help;snapshots;backfill' {
            break
        }
        'k3sdoctor;help;snapshots;restore' {
            break
        }
        'k3sdoctor;help;dump' {
            break
        }
        'k3sdoctor;help;serve' {
            break
        }
        'k3sdoctor;help;completions' {
            break
        }
        'k3sdoctor;help;rbac' {
            break
        }
        'k3sdoctor;help;man' {
            break
        }
        'k3sdoctor;help;options' {
            break
        }
        'k3sdoctor;help;version' {
            break
        }
        'k3sdoctor;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
