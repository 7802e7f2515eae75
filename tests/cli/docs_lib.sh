# Helpers of the documentation tests (docs_*_test.sh), sourced by bash: read what a
# tool's --help lists, read a rendered man page, and run a bash completion function
# the way bash does on <Tab>.

# Prints what a CLI11 --help text (on stdin) lists, one item a line:
#   option NAME [VALUE,VALUE...]       every name of every option (-o and --output)
#   positional NAME [VALUE,VALUE...]   enumerated values only when CLI11 lists them
#   command NAME
# CLI11 prints each entry on a line indented by exactly two spaces ("  -o,--output
# TEXT:{a,b}=a  description"); descriptions that do not fit continue on lines indented
# further, and the footer is not indented.
docs_parse_help() {
    local section="" line type names values name
    while IFS= read -r line; do
        case $line in
            Options:*) section="option"; continue ;;
            Positionals:*) section="positional"; continue ;;
            Subcommands:*) section="command"; continue ;;
        esac
        [[ -n $section && $line =~ ^\ \ ([^ ]+)(\ +([^ ]+))? ]] || continue
        names=${BASH_REMATCH[1]}
        type=${BASH_REMATCH[3]-}
        values=""
        [[ $type =~ :\{([^}]*)\} ]] && values=${BASH_REMATCH[1]}
        case $section in
            command) echo "command $names" ;;
            positional) echo "positional $names $values" ;;
            option)
                local IFS=,
                for name in $names; do
                    echo "option $name $values"
                done
                ;;
        esac
    done
}

# Renders a man page as plain ASCII text with long lines, so that no entry wraps:
# tags of .TP entries start at column 8 (7 spaces), their text at column 15.
docs_render_man() {
    groff -man -Tascii -P-c -P-b -P-o -P-u -rLL=250n "$1"
}

# Prints the lines of section $2 (an .SH heading, e.g. OPTIONS) of the rendered page
# $1, or of its subsection $3 (an .SS heading) when given.
docs_man_section() {
    local text=$1 section=$2 subsection=${3-}
    awk -v sh="$section" -v ss="$subsection" '
        /^[^ ]/ { in_sh = ($0 == sh); in_ss = (ss == ""); next }
        in_sh && /^   [^ ]/ { in_ss = (ss == "" || substr($0, 4) == ss); next }
        in_sh && in_ss { print }' <<<"$text"
}

# Prints the entry (tag line and text) whose tag starts with the option or word $2, in
# the section text $1: a tag line is "       -o, --output file", "       --clock
# cpu|wall" or "       run    Run program..." (a short tag shares its line).
docs_man_entry() {
    awk -v word="$2" '
        function is_tag(line,    rest, n, i, names) {
            if (line !~ /^       [^ ]/) return 0
            rest = substr(line, 8)
            n = split(rest, names, /, /)
            for (i = 1; i <= n; i++) {
                if (names[i] == word || index(names[i], word " ") == 1 || index(names[i], word "=") == 1) return 1
                if (names[i] !~ /^-[^ ]*$/) break  # only "-o, --output" lists several names
            }
            return 0
        }
        /^       [^ ]/ { in_entry = is_tag($0) }
        /^ {0,6}[^ ]/ { in_entry = 0 }
        in_entry { print }' <<<"$1"
}

# Runs the completion bash would run for the command line "$@" with the cursor at the
# end of its last word ("" completes a new word), and leaves the candidates in
# COMPREPLY.
docs_complete() {
    local line
    printf -v line '%s ' "$@"
    docs_complete_line "${line% }" # (no IFS change: the completion would inherit it)
}

# The same for the command line $1 as typed, the cursor at its end. The words are split
# as bash splits them for completion: at blanks, and "=" (of COMP_WORDBREAKS) is a word
# of its own ("--clock=w" is "--clock" "=" "w"). The completion function is the one
# `complete -p` registered for the first word.
docs_complete_line() {
    local line=$1 part spec function
    local -a parts words=()
    read -ra parts <<<"$line"
    for part in "${parts[@]}"; do
        while [[ $part == *=* ]]; do
            [[ -n ${part%%=*} ]] && words+=("${part%%=*}")
            words+=("=")
            part=${part#*=}
        done
        [[ -n $part ]] && words+=("$part")
    done
    [[ $line == *[[:blank:]] ]] && words+=("")
    spec=$(complete -p "${words[0]}" 2>/dev/null) || {
        echo "no bash completion is registered for ${words[0]}" >&2
        return 1
    }
    function=${spec#*-F }
    function=${function%% *}
    COMP_WORDS=("${words[@]}")
    COMP_CWORD=$((${#words[@]} - 1))
    COMP_LINE=$line
    COMP_POINT=${#line}
    COMPREPLY=()
    local cur=${COMP_WORDS[COMP_CWORD]} prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    "$function" "${words[0]}" "$cur" "$prev"
    return 0 # a completion function's status means nothing; COMPREPLY is the answer
}

# True when COMPREPLY holds exactly $1.
docs_offered() {
    local candidate
    for candidate in "${COMPREPLY[@]}"; do
        [[ $candidate == "$1" ]] && return 0
    done
    return 1
}

# Loads bash-completion ($1: its bash_completion script) and the completion scripts
# $2... into this shell. compopt works only while bash itself runs a completion, so it
# is a no-op here.
docs_load_completion() {
    local main=$1 script
    shift
    # shellcheck disable=SC1090
    source "$main" || return 1
    compopt() { :; }
    for script in "$@"; do
        # shellcheck disable=SC1090
        source "$script" || return 1
    done
}
