#!/bin/bash
# Every man page in docs/ renders with man(1) without warnings, and cannot
# drift from its program: the page's OPTIONS section and the program's
# --help name the same long options, and each command --help lists has an
# entry in the page.  Needs no root.
. "$(dirname "$0")/lib.bash"
command -v man >/dev/null || skip "man not installed"
command -v groff >/dev/null || skip "groff not installed"
man --help 2>&1 | grep -q -- '--warnings' || skip "man is not man-db (no --warnings)"
unset MAN_KEEP_FORMATTING

shopt -s nullglob
pages=("$TOP"/docs/*.[1-8])
[ ${#pages[@]} -gt 0 ] || fail "no man pages in docs/"

# render PAGE WIDTH: plain text, hyphens and minus signs as ASCII '-'
render() {
	MANWIDTH=$2 man -l "$1" 2>/dev/null |
		sed 's/.\x08//g; s/\xe2\x80\x90/-/g; s/\xe2\x88\x92/-/g'
}

# has_word TEXTFILE WORD: WORD (an option or command) stands alone in it
has_word() {
	grep -qE -- "(^|[^A-Za-z0-9_-])$2([^A-Za-z0-9_-]|\$)" "$1"
}

for page in "${pages[@]}"; do
	name=$(basename "$page")
	prog=${name%.*}

	MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null | tee "$T/warn"
	[ -s "$T/warn" ] && fail "$name: man --warnings printed the above"
	render "$page" 80 >"$T/page80"
	grep -q '^NAME' "$T/page80" || fail "$name: does not render (no NAME)"
	ok "$name renders without warnings ($(wc -l <"$T/page80") lines)"

	bin=$BIN/$prog
	if [ ! -x "$bin" ]; then
		echo "note: $name: no program $bin, options not checked"
		continue
	fi
	for sec in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' 'SEE ALSO'; do
		grep -q "^$sec\$" "$T/page80" || fail "$name: no $sec section"
	done

	"$bin" --help >"$T/help" 2>&1 || { cat "$T/help"; fail "$prog --help"; }
	# wide enough that no option is broken across lines
	render "$page" 1000 >"$T/page"

	# the OPTIONS section, without its heading and the next one
	sed -n '/^OPTIONS$/,/^[A-Z]/p' "$T/page" | sed '1d;$d' >"$T/options"

	opts=$(grep -oE -- '--[a-z][a-z0-9-]*' "$T/help" | sort -u)
	[ -n "$opts" ] || fail "$prog --help lists no long option"
	n=0
	for o in $opts; do
		has_word "$T/options" "$o" || fail "$name: OPTIONS lacks $o (in $prog --help)"
		n=$((n + 1))
	done
	ok "$name OPTIONS has all $n long options of $prog --help"

	n=0
	for o in $(grep -oE -- '--[a-z][a-z0-9-]*' "$T/options" | sort -u); do
		has_word "$T/help" "$o" || fail "$name: OPTIONS has $o, $prog --help does not"
		n=$((n + 1))
	done
	ok "$name OPTIONS: all $n long options exist in $prog"

	# commands: help lines "  word ..." that are not options; each must
	# start a line of the page (a .TP tag), not merely occur in the text
	cmds=$(sed -n 's/^  \([a-z][a-z0-9-]*\)\( .*\)\{0,1\}$/\1/p' "$T/help" | sort -u)
	n=0
	for c in $cmds; do
		grep -qE -- "^ +$c( |\$)" "$T/page" || fail "$name: no entry for command $c (in $prog --help)"
		n=$((n + 1))
	done
	if [ "$n" -gt 0 ]; then
		ok "$name has an entry for each of the $n commands of $prog --help"
	fi
done
ok "man_pages"
