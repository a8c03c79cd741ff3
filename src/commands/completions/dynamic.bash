# bash completion for __PROG__, printed by `__PROG__ completions bash`.
#
# Every candidate comes from `__PROG__ __complete WORD...`, the engine kubectl's plugin
# completion asks too: subcommands, the flags each command takes, their values, the
# kubeconfig's contexts, and the cluster's server nodes and lock names (read within 2 s;
# nothing is offered, and nothing printed, when the cluster cannot be read).
# The answer is Cobra's: one `value<TAB>description` per line, then `:<directive>`.

___FUNC__() {
    local -a words=() out=() candidates=()
    local i word glued=0
    # bash splits `--context=prod` and `arn:aws:eks:…` at `=` and `:` (COMP_WORDBREAKS);
    # glue them back, so the engine sees the words as typed.
    for (( i = 1; i <= COMP_CWORD; i++ )); do
        word=${COMP_WORDS[i]}
        if (( ${#words[@]} )) && [[ $word == ":" || ( $word == "=" && ${words[-1]} == --* ) ]]; then
            words[-1]+=$word
            glued=1
        elif (( glued )); then
            words[-1]+=$word
            glued=0
        else
            words+=("$word")
        fi
    done
    (( ${#words[@]} )) || words=("")
    local current=${words[-1]}
    # What bash replaces is only the part after the last `=` or `:`.
    local replaced=${COMP_WORDS[COMP_CWORD]}
    [[ $replaced == "=" || $replaced == ":" ]] && replaced=""
    local strip=${current%"$replaced"}

    mapfile -t out < <("${COMP_WORDS[0]}" __complete "${words[@]}" 2>/dev/null)
    (( ${#out[@]} )) || return 0
    local directive=${out[-1]#:}
    unset 'out[-1]'
    local line value
    for line in "${out[@]}"; do
        value=${line%%$'\t'*}
        [[ $value == "$current"* ]] || continue
        candidates+=("${value#"$strip"}")
    done
    COMPREPLY=("${candidates[@]}")
    # Directive 4 (no file completion): never fall back to file names.
    if (( ${#COMPREPLY[@]} == 0 && (directive & 4) )); then
        compopt +o default 2>/dev/null
    fi
    return 0
}

complete -o default -F ___FUNC__ __PROG__
