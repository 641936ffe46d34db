greet() {
    local who=${1:-world}
    cat <<EOT >&2
hello, $who
EOT
    case $who in
        root) return 1 ;;
        *) echo "${who^}" ;;
    esac
}
until [ "$n" -ge 3 ]; do n=$((n + 1)); done; { echo a; echo b; } | sort -r &
if [[ -f x ]]; then :; elif (( n > 2 )); then echo big; else exit 2; fi
