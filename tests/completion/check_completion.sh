#!/bin/bash
# Drives tools/resmon/completion.bash the way bash does (COMP_WORDS, then the
# completion function) and checks what it offers.
#   Usage: check_completion.sh COMPLETION_FILE RESMON_BINARY
# Exits 77 (CTest: skipped) when bash-completion itself is not installed.
set -u
completion=$1
resmon=$(readlink -f "$2")
framework=/usr/share/bash-completion/bash_completion
[ -r "$framework" ] || { echo "bash-completion not installed: $framework"; exit 77; }
# shellcheck source=/dev/null
source "$framework"
# shellcheck source=/dev/null
source "$completion"
complete -p resmon >/dev/null || { echo "completion: 'complete -p resmon' is not set"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
touch run.csv run.jsonl run.json chart.svg chart.png notes.txt

failures=0
offered() { # words of the command line (the last is the one being completed)
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    # compopt complains outside a real completion; what it would set does not
    # change the words offered.
    _resmon "$resmon" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
    [ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}
expect() { # description, expected (sorted, space-separated), words...
    local what=$1 want=$2
    shift 2
    local got
    got=$(offered "$@")
    if [ "$got" != "$want" ]; then
        echo "completion: $what: offered '$got', expected '$want'"
        failures=$((failures + 1))
    fi
}
expect_has() { # description, one word that must be offered, words...
    local what=$1 want=$2
    shift 2
    case " $(offered "$@") " in
        *" $want "*) ;;
        *) echo "completion: $what: '$want' not offered"; failures=$((failures + 1)) ;;
    esac
}

expect "a long option" "--no-children " "$resmon" --no-ch
expect "options starting --d" "--duration " "$resmon" -q --d
expect "the samples file" "run.csv run.jsonl " "$resmon" -s run
expect "the summary file" "run.json " "$resmon" --output run
expect "the chart" "chart.png chart.svg " "$resmon" --plot ch
expect_has "the plot subcommand" plot "$resmon" plo
expect "plot: the runs are samples files" "run.csv run.jsonl " "$resmon" plot run
expect "plot: more runs after one" "run.csv run.jsonl " "$resmon" plot run.csv -l base run
expect "plot: the chart" "chart.png chart.svg " "$resmon" plot run.csv -o ch
expect "plot: options starting --t" "--title " "$resmon" plot --t
expect "plot: a label is a name" "" "$resmon" plot --label ""
expect "a GPU selection" "all auto " "$resmon" --gpu a
expect "a metric group" "counts cpu-split " "$resmon" --metrics c
expect "a metric group after a comma" "io,faults " "$resmon" --metrics io,f
expect "an interval is a number" "" "$resmon" -i ""
expect "options starting --rep" "--repeat " "$resmon" --rep
expect "options starting --ig" "--ignore-failure " "$resmon" --ig
expect "a number of runs is a number" "" "$resmon" --repeat ""
expect_has "the command after --repeat N --warmup K" echo "$resmon" --repeat 5 --warmup 1 ech
expect_has "the command after --" echo "$resmon" -q -- ech
expect_has "the command after options and their values" echo "$resmon" -i 0.5 -o out.json ech
expect_has "the command's own files after --" notes.txt "$resmon" -- cat no
expect "a command's options are its own, not resmon's" "" "$resmon" -- ls --no-ch
expect_has "--pid offers running processes" "$$" "$resmon" --pid "$$"

expect "resmon compare's options" "--format " "$resmon" compare --fo
expect "resmon compare's formats" "json markdown text " "$resmon" compare --format ""
expect "a limit is KEY=LIMIT" "" "$resmon" compare --max-increase ""
expect "resmon compare's inputs" "run.json " "$resmon" compare --format json run
mkdir runs
expect "resmon compare's directories of runs" "run.json runs " "$resmon" compare base.json run
rmdir runs
expect_has "the subcommand as the first word" compare "$resmon" compa
for option in $("$resmon" compare --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    expect_has "$option from resmon compare --help" "$option" "$resmon" compare "$option"
done

# Every long option --help names is offered (a new option needs its completion).
for option in $("$resmon" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    expect_has "$option from --help" "$option" "$resmon" "$option"
done

for option in $("$resmon" plot --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    expect_has "plot $option from resmon plot --help" "$option" "$resmon" plot "$option"
done

[ "$failures" -eq 0 ] || exit 1
echo "completion: all cases offered what they should"
