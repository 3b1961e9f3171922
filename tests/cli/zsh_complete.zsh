# zsh -f zsh_complete.zsh DIR LINE: the matches zsh's completion system offers
# for LINE (as if TAB were pressed after it), one per line, with DIR (holding
# _testdata) first in $fpath.  An interactive zsh runs in a pseudo-terminal
# (zsh/zpty) with compadd wrapped to print what it adds (and add it); the same
# technique as zsh-capture-completion.  With TD_ZDUMP set, compinit's dump
# file is kept there and reused (-C) by the next run: compinit then takes
# 0.1 s instead of 1.3 s.
zmodload zsh/zpty || exit 3
fdir=$1
shift
init=$(mktemp); dump=${TD_ZDUMP:-$init.dump}
cat > $init <<EOF
PROMPT=
fpath=($fdir \$fpath)
autoload -U compinit
compinit -C -u -d $dump
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
comppostfuncs=( exit )
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "\$@"
    return \$?
  fi
  typeset -a __hits
  builtin compadd -A __hits "\$@"
  # and add them for real: else zsh, seeing no match, falls back (_files -/
  # would go on to all files when no directory was added)
  builtin compadd "\$@"
  local h
  for h in \$__hits; do echo -E - "<M>\$h</M>"; done
}
echo init-ok
EOF
zpty z zsh -f -i
zpty -w z "source $init"
repeat 50; do
  zpty -r z line
  [[ $line == init-ok* ]] && break
done
zpty -w z "$*"$'\t'
while zpty -r z line; do
  [[ $line == *'<M>'*'</M>'* ]] && print -r -- "${${line#*<M>}%%</M>*}"
done
rm -f $init; [ -n "${TD_ZDUMP:-}" ] || rm -f $init.dump
