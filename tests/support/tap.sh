# tap.sh: the TAP counter that the sh test scripts source (POSIX sh): pass, fail, check. The script
# ends with `echo "1..$n"` and `[ "$fails" = 0 ]`.
n=0
fails=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
# check DESCRIPTION CMD...: pass when CMD succeeds, else fail.
check() { tap_desc=$1; shift; if "$@"; then pass "$tap_desc"; else fail "$tap_desc"; fi; }
