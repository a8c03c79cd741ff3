# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_k3sdoctor_global_optspecs
    string join \n kubeconfig= context= server= cluster= user= token= certificate-authority= insecure-skip-tls-verify as= as-group= n/namespace= request-timeout= o/output= distro= from-file= max-bundle-size= max-bundle-entries= now= v/verbose q/quiet no-headers color= h/help V/version
end

function __fish_k3sdoctor_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_k3sdoctor_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_k3sdoctor_using_subcommand
    set -l cmd (__fish_k3sdoctor_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -f -a "leases" -d 'Who holds each k3s/RKE2 leader lock, is it fresh, is there a split, does it matter here'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -f -a "check" -d 'Every check at once: leases, snapshots, etcd membership; findings linked to their cause'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -f -a "snapshots" -d 'ETCDSnapshotFiles against the <prog>-etcd-snapshots ConfigMap, by k3s\'s own rules'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -f -a "serve" -d 'Keep watching and export the verdicts for Prometheus: /metrics, /healthz, /readyz, /report'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -f -a "rbac" -d 'Print the RBAC roles a use needs, as YAML for kubectl apply -f -'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -f -a "man" -d 'Print the man page, or write all man pages into a directory'
complete -c k3sdoctor -n "__fish_k3sdoctor_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l contexts -d 'Read the contexts whose name matches this regular expression (anywhere in the name; anchor it with ^ and $)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l parallel -d 'Read at most this many clusters at once [default: 16]' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l fail-on -d 'Exit 1 when a finding of at least this severity remains' -r -f -a "error\t''
warning\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l all-contexts -d 'Read every context of the kubeconfig (the KUBECONFIG files merged as kubectl merges them)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l ignore-unreachable -d 'A cluster that cannot be read is a warning row instead of exit 3'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -s w -l watch -d 'Print the table, then one line per change (holder, state, transitions) until interrupted; with -o json|yaml, one LeaseChange document per change'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -f -a "follow" -d 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and not __fish_seen_subcommand_from follow help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l to -d 'The node (name or hostname) that should hold the lock (default: the holder of the other k3s lock)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l lease -d 'The lock to move: <prog> (default) or <prog>-etcd' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l timeout -d 'How long to wait for the takeover (default: the lock record\'s lease duration plus its renew deadline, 75s for wrangler\'s 45s/30s, at least 30s and at most 10m)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l fail-on -d 'After a verified write, exit 1 when a finding of at least this severity remains' -r -f -a "error\t''
warning\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l fix -d 'Write the change (after a server-side dry run and confirmation); without it only the plan is shown'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l no-wait -d 'Do not wait for the target to take the lock over'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l force -d 'Skip the target, etcd-quorum and split checks (never the permission check)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from follow" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from help" -f -a "follow" -d 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand leases; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l fail-on -d 'Exit 1 when a finding of at least this severity remains' -r -f -a "error\t''
warning\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l ignore -d 'Report findings with this code (on OBJECT only, e.g. node/server-1) as ignored: listed, never counted in the exit code or alerts. Repeatable' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l config -d 'A YAML file with an `ignore:` list of CODE[=OBJECT] (default, when it exists: $XDG_CONFIG_HOME/k3sdoctor/config.yaml, else ~/.config/k3sdoctor/config.yaml)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l contexts -d 'Read the contexts whose name matches this regular expression (anywhere in the name; anchor it with ^ and $)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l parallel -d 'Read at most this many clusters at once [default: 16]' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l all-contexts -d 'Read every context of the kubeconfig (the KUBECONFIG files merged as kubectl merges them)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l ignore-unreachable -d 'A cluster that cannot be read is a warning row instead of exit 3'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand check" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -f -a "list" -d 'One row per snapshot: node, storage, size, and the state of its ConfigMap entry'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -f -a "diff" -d 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -f -a "backfill" -d 'Write the missing and stale entries exactly as k3s would (with --fix)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -f -a "restore" -d 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and not __fish_seen_subcommand_from list diff backfill restore help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l fail-on -d 'Exit 1 when a finding of at least this severity remains' -r -f -a "error\t''
warning\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l node -d 'Only snapshots taken (or uploaded) by this node' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l storage -d 'Only snapshots stored locally on their node, or in S3' -r -f -a "local\t''
s3\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l failed -d 'Only failed snapshots (readyToUse false with an error)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l fail-on -d 'Exit 1 when a finding of at least this severity remains (default: on any difference, like kubectl diff, or any error)' -r -f -a "error\t''
warning\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from diff" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l backup -d 'Where to save the ConfigMap before changing it (default: ./<configmap>.<resourceVersion>.backup.json); undo with `snapshots restore --from-backup FILE --fix`' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l fail-on -d 'After a verified write, exit 1 when a finding of at least this severity remains' -r -f -a "error\t''
warning\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l fix -d 'Write the change (after a backup, a server-side dry run and confirmation); without it only the plan is shown'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l prune -d 'Also remove entries that have no ETCDSnapshotFile behind them'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from backfill" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l from-backup -d 'The backup file `snapshots backfill --fix` saved (it prints its path)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l backup -d 'Where to save the current ConfigMap before restoring (default: ./<configmap>.<resourceVersion>.backup.json)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l fail-on -d 'After a verified write, exit 1 when a finding of at least this severity remains' -r -f -a "error\t''
warning\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l fix -d 'Write the change (after a backup of the current ConfigMap, a server-side dry run and confirmation); without it only the plan is shown'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -s y -l yes -d 'Do not ask for confirmation (needed without a terminal)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l force -d 'Restore a backup that cannot be confirmed as this very ConfigMap\'s (it was recreated since, or the backup or the role cannot show the cluster\'s identity); another cluster\'s backup is refused even so'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from restore" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from help" -f -a "list" -d 'One row per snapshot: node, storage, size, and the state of its ConfigMap entry'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from help" -f -a "diff" -d 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from help" -f -a "backfill" -d 'Write the missing and stale entries exactly as k3s would (with --fix)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from help" -f -a "restore" -d 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand snapshots; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l listen -d 'The address and port to serve the endpoints on (`:9810`: every interface, as in Go)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l log-format -d 'How to write the log on stderr: text, or one JSON object per line' -r -f -a "text\t''
json\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l ignore -d 'Report findings with this code (on OBJECT only, e.g. node/server-1) as ignored: listed, never counted in the exit code or alerts. Repeatable' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l config -d 'A YAML file with an `ignore:` list of CODE[=OBJECT] (default, when it exists: $XDG_CONFIG_HOME/k3sdoctor/config.yaml, else ~/.config/k3sdoctor/config.yaml)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l context -d 'The kubeconfig context to use; repeat it to read several clusters at once (check, leases)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l server -d 'The address and port of the API server, in place of the kubeconfig\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l cluster -d 'The kubeconfig cluster to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l user -d 'The kubeconfig user to use, in place of the context\'s' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l token -d 'Bearer token for the API server, in place of the user\'s credentials' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l certificate-authority -d 'A CA certificate file (PEM) to verify the API server with' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l as -d 'The user to impersonate (needs the `impersonate` verb)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l as-group -d 'A group to impersonate; repeatable; needs --as' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -s n -l namespace -d 'The namespace: k3s and RKE2 keep their locks and snapshot ConfigMap in kube-system, so only kube-system is accepted (kubectl\'s -n, for muscle memory)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l request-timeout -d 'How long to wait for one API request (e.g. 10s, 1m; 0 = no limit)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -s o -l output -d 'Output format' -r -f -a "table\t''
wide\t''
json\t''
yaml\t''
jsonl\t'One JSON object per line, written as each cluster of a fleet is read'"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l distro -d 'Which product runs the cluster (auto: from the lock names, then the node versions)' -r -f -a "auto\t''
k3s\t''
rke2\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l from-file -d 'Read objects from `kubectl get -o yaml|json` output or a support bundle (archive or folder) instead of a cluster (`-`: standard input). Repeatable' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l max-bundle-size -d 'Stop reading a support bundle past this many decompressed bytes (e.g. 4GiB)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l max-bundle-entries -d 'Stop reading a support bundle past this many archive entries' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l now -d 'The time to judge freshness against, RFC 3339 (default: the local clock; for a bundle, when it was collected; for a dump, its newest timestamp)' -r
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l insecure-skip-tls-verify -d 'Do not verify the API server\'s certificate (insecure)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand serve" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand completions" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand completions" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand completions" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand completions" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand completions" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand rbac" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand rbac" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand rbac" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand rbac" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand rbac" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand rbac" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand man" -l out-dir -d 'Write k3sdoctor.1 and one page per subcommand into this directory' -r -F
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand man" -l color -d 'When to use colours (auto: on a terminal, unless NO_COLOR, CLICOLOR=0 or TERM=dumb; CLICOLOR_FORCE forces it)' -r -f -a "auto\t''
always\t''
never\t''"
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand man" -s v -l verbose -d 'More detail on stderr: -v request trace and error causes, -vv more'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand man" -s q -l quiet -d 'Print nothing for table output; rely on the exit code'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand man" -l no-headers -d 'Print tables without their header line (as kubectl\'s --no-headers)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand man" -s V -l version -d 'Print version'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and not __fish_seen_subcommand_from leases check snapshots serve completions rbac man help" -f -a "leases" -d 'Who holds each k3s/RKE2 leader lock, is it fresh, is there a split, does it matter here'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and not __fish_seen_subcommand_from leases check snapshots serve completions rbac man help" -f -a "check" -d 'Every check at once: leases, snapshots, etcd membership; findings linked to their cause'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and not __fish_seen_subcommand_from leases check snapshots serve completions rbac man help" -f -a "snapshots" -d 'ETCDSnapshotFiles against the <prog>-etcd-snapshots ConfigMap, by k3s\'s own rules'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and not __fish_seen_subcommand_from leases check snapshots serve completions rbac man help" -f -a "serve" -d 'Keep watching and export the verdicts for Prometheus: /metrics, /healthz, /readyz, /report'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and not __fish_seen_subcommand_from leases check snapshots serve completions rbac man help" -f -a "completions" -d 'Print a shell completion script'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and not __fish_seen_subcommand_from leases check snapshots serve completions rbac man help" -f -a "rbac" -d 'Print the RBAC roles a use needs, as YAML for kubectl apply -f -'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and not __fish_seen_subcommand_from leases check snapshots serve completions rbac man help" -f -a "man" -d 'Print the man page, or write all man pages into a directory'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and not __fish_seen_subcommand_from leases check snapshots serve completions rbac man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and __fish_seen_subcommand_from leases" -f -a "follow" -d 'Move a k3s lock onto the server that should hold it (default: k3s onto the k3s-etcd holder) and verify the takeover'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and __fish_seen_subcommand_from snapshots" -f -a "list" -d 'One row per snapshot: node, storage, size, and the state of its ConfigMap entry'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and __fish_seen_subcommand_from snapshots" -f -a "diff" -d 'What is missing, orphaned or stale in the ConfigMap, and why; exits 1 on differences'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and __fish_seen_subcommand_from snapshots" -f -a "backfill" -d 'Write the missing and stale entries exactly as k3s would (with --fix)'
complete -c k3sdoctor -n "__fish_k3sdoctor_using_subcommand help; and __fish_seen_subcommand_from snapshots" -f -a "restore" -d 'Put back the ConfigMap data a backfill backup holds, exactly (with --fix)'
