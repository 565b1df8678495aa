# Two attn-tune processes merging into one database at once, each 20
# one-entry files (<dir>/a<i>.json and <dir>/b<i>.json), one locked update
# per file. Fails if either writer fails.
# usage: sh two-writers.sh <db> <dir>
db=$1; dir=$2
writer() {
  for i in $(seq 0 19); do
    attn-tune --db "$db" --merge "$dir/$1$i.json" || return 1
  done
}
writer a & a=$!
writer b & b=$!
wait $a || exit 1
wait $b || exit 1
