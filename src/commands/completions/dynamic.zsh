#compdef __PROG__
# zsh completion for __PROG__, printed by `__PROG__ completions zsh`: put it in a directory of
# $fpath as _k3sdoctor, or source it after compinit.
#
# Every candidate comes from `__PROG__ __complete WORD...`, the engine kubectl's plugin
# completion asks too: subcommands, the flags each command takes, their values, the
# kubeconfig's contexts, and the cluster's server nodes and lock names (read within 2 s;
# nothing is offered, and nothing printed, when the cluster cannot be read).
# The answer is Cobra's: one `value<TAB>description` per line, then `:<directive>`.

___FUNC__() {
    local -a lines candidates
    local out directive line value description
    out=$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
    lines=("${(@f)out}")
    (( ${#lines} )) || return 1
    directive=${lines[-1]#:}
    for line in "${(@)lines[1,-2]}"; do
        value=${line%%$'\t'*}
        description=
        [[ $line == *$'\t'* ]] && description=${line#*$'\t'}
        # `:` separates a value from its description for _describe.
        candidates+=("${value//:/\\:}${description:+:$description}")
    done
    if (( ${#candidates} )); then
        _describe -t values '__PROG__' candidates
        return
    fi
    # Directive 4 (no file completion): offer nothing rather than file names.
    (( directive & 4 )) || _files
}

if [[ ${funcstack[1]} == ___FUNC__ ]]; then
    ___FUNC__ "$@"
else
    compdef ___FUNC__ __PROG__
fi
