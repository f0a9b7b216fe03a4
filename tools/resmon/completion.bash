# bash completion for resmon (installed as share/bash-completion/completions/resmon).
# Options before "--" complete as resmon's own; after "--" (or the first word
# that is not an option) the words belong to COMMAND and complete as its own.
# resmon plot [OPTIONS] RUN... -o FILE: saved samples files and a chart.
_resmon_plot()
{
    case $prev in
        -o | --output)
            _filedir '@(svg|png)'
            return
            ;;
        -l | --label | --title | --cpus)
            return # a name, a title or a number: nothing to offer
            ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--output --label --title --cpus --help -o -l -h' -- "$cur"))
        return
    fi
    _filedir '@(csv|jsonl)'
}

# resmon compare [OPTIONS] BASE NEW: summaries and --repeat files (.json) or
# directories of runs.
_resmon_compare()
{
    case $prev in
        --format)
            COMPREPLY=($(compgen -W "text markdown json" -- "$cur"))
            return
            ;;
        --max-increase)
            return # KEY=N%, KEY=N or KEY=N%,M: nothing to offer
            ;;
        --alpha)
            COMPREPLY=($(compgen -W "0.05 0.01" -- "$cur"))
            return
            ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--max-increase --alpha --all --allow-different-commands --format --help -h' -- "$cur"))
        return
    fi
    _filedir json
}

_resmon()
{
    local cur prev words cword
    _init_completion || return

    if ((cword > 1)) && [[ ${words[1]} == plot ]]; then
        _resmon_plot
        return
    fi
    if ((cword > 1)) && [[ ${words[1]} == compare ]]; then
        _resmon_compare
        return
    fi
    if ((cword > 1)) && [[ ${words[1]} == mark ]]; then # resmon mark NAME: a name of the user's
        ((cword == 2)) && [[ $cur == -* ]] && COMPREPLY=($(compgen -W '--help' -- "$cur"))
        return
    fi

    # resmon stops reading options at "--" or at the first other word that is
    # not an option or an option's value (getopt's "+" mode).
    local i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --)
                _command_offset $((i + 1))
                return
                ;;
            -i | --interval | -o | --output | -s | --samples | --processes-file | --processes | --plot | --trace | --gpu | --duration | --pid | --metrics | \
                --serve | --serve-linger | --push | --push-interval | --push-job | --push-timeout | --textfile | --label | \
                --repeat | --warmup)
                ((i++))
                ;;
            -*) ;;
            *)
                _command_offset $i
                return
                ;;
        esac
    done

    case $prev in
        -i | --interval | --duration | --serve-linger | --push-interval | --push-timeout)
            return # a number of seconds: nothing to offer
            ;;
        --memory-limit)
            return # a size: nothing to offer
            ;;
        --repeat | --warmup)
            return # a number of runs: nothing to offer
            ;;
        --cgroup)
            _filedir -d
            return
            ;;
        --serve | --push | --push-job | --label)
            return # an address, a URL, a name or KEY=VALUE: nothing to offer
            ;;
        --textfile)
            _filedir prom
            return
            ;;
        -o | --output)
            _filedir json
            return
            ;;
        -s | --samples | --processes-file)
            _filedir '@(csv|jsonl)'
            return
            ;;
        --plot)
            _filedir '@(svg|png)'
            return
            ;;
        --trace)
            _filedir json
            return
            ;;
        --processes)
            COMPREPLY=($(compgen -W 'top all' -- "$cur"))
            return
            ;;
        --gpu)
            local gpus
            gpus=$("$1" --list-gpus 2>/dev/null | cut -f1 | grep ':')
            COMPREPLY=($(compgen -W "auto none all $gpus" -- "$cur"))
            return
            ;;
        --pid)
            _pids
            return
            ;;
        --metrics)
            # A comma-separated list: complete the word after the last comma.
            local done_part=""
            [[ $cur == *,* ]] && done_part=${cur%,*},
            COMPREPLY=($(compgen -P "$done_part" -W "io memory counts cpu-split faults network all none" -- "${cur##*,}"))
            return
            ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--interval --output --samples --processes-file --processes --plot --trace --gpu --no-children
            --duration --wait-orphans --reset-peak --metrics --memory-limit --no-cgroup --cgroup --pid
            --repeat --warmup --ignore-failure --serve
            --serve-linger --push
            --push-interval --push-job --push-timeout --textfile --label --quiet --list-gpus
            --version --help
            -i -o -s -q -h --' -- "$cur"))
        return
    fi
    _command_offset $cword
    ((cword == 1)) && [[ plot == "$cur"* ]] && COMPREPLY+=(plot) # the subcommand, beside the commands
    ((cword == 1)) && [[ compare == "$cur"* ]] && COMPREPLY+=(compare)
    ((cword == 1)) && [[ mark == "$cur"* ]] && COMPREPLY+=(mark)
} &&
    complete -F _resmon resmon

