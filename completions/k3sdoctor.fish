# fish completion for k3sdoctor, printed by `k3sdoctor completions fish`.
#
# Every candidate comes from `k3sdoctor __complete WORD...`, the engine kubectl's plugin
# completion asks too: subcommands, the flags each command takes, their values, the
# kubeconfig's contexts, and the cluster's server nodes and lock names (read within 2 s;
# nothing is offered, and nothing printed, when the cluster cannot be read).
# The answer is Cobra's: one `value<TAB>description` per line, then `:<directive>`.

function __k3sdoctor_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l out ($words[1] __complete $words[2..-1] $current 2>/dev/null)
    set -q out[1]; or return
    set -l directive (string replace -r '^:' '' -- $out[-1])
    set -e out[-1]
    if set -q out[1]
        printf '%s\n' $out
    else if test (math "$directive % 8 - $directive % 4") -eq 0
        # Directive 0: the shell's own file names.
        __fish_complete_path $current
    end
end

complete -c k3sdoctor -f -a '(__k3sdoctor_complete)'
