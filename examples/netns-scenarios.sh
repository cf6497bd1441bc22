#!/bin/bash
# Issue 19's network-namespace scenarios against one fedecdf binary (root,
# iproute2): servers in a namespace of their own at 10.77.0.1, parties in
# another at 10.77.0.3, both created here and deleted on exit; nothing
# outside them is touched. About a minute. EXPERIMENTS.md has the figures.
#   go build -o /tmp/fedecdf ./cmd/fedecdf && sudo examples/netns-scenarios.sh /tmp/fedecdf
set -u
B=$(readlink -f "$1"); W=$(mktemp -d); S=i19m$$s; P=i19m$$p
trap 'kill $(jobs -p) 2>/dev/null; ip netns del $S; ip netns del $P; rm -rf $W' EXIT
ip netns add $S; ip netns add $P
ip link add v$$s netns $S type veth peer name v$$p netns $P
ip -n $S addr add 10.77.0.1/24 dev v$$s; ip -n $P addr add 10.77.0.3/24 dev v$$p
for ns in $S $P; do ip -n $ns link set lo up; done
ip -n $S link set v$$s up; ip -n $P link set v$$p up
cd $W
for k in leader helper analyst; do $B keygen --output $k.key >/dev/null; done
$B manifest --output m.json --dataset d --leader leader.key.pub --leader-addr /ip4/10.77.0.1/tcp/4001 \
  --helper helper.key.pub --helper-addr /ip4/10.77.0.1/tcp/4002 --analyst analyst.key.pub \
  --bins 64 --mechanism tree --epsilon 1 --budget-epsilon 4 --min-reports 1 >/dev/null
declare -A PID=([leader]= [helper]=)
start() { ip netns exec $S $B server --role $1 --key $1.key --manifest m.json --listen /ip4/10.77.0.1/tcp/$2 --store $1.db --log-level warn 2>>$1.log & PID[$1]=$!; sleep 1; }
fresh() { for r in leader helper; do [ -n "${PID[$r]:-}" ] && kill -9 ${PID[$r]} 2>/dev/null; wait ${PID[$r]} 2>/dev/null; done; rm -f leader.db helper.db; start helper 4002; start leader 4001; }
party() { ip netns exec $P $B party --manifest m.json "$@"; }

fresh; ok=0
for i in $(seq 40); do party --score-value 0.5 --label-value 1 >/dev/null 2>&1 && ok=$((ok+1)); done
echo "40 sequential single-record parties from one address: $ok succeed"

fresh; for i in $(seq 30); do (party --score-value 0.5 --label-value 1 >/dev/null 2>&1; echo $? > rc.$i) & done; wait_all() { while [ $(ls rc.* 2>/dev/null | wc -l) -lt $1 ]; do sleep 0.2; done; }; wait_all 30
echo "30 single-record parties started together: $(grep -l '^0$' rc.* | wc -l) succeed"; rm -f rc.*

fresh
for i in $(seq 20); do awk -v s=$i 'BEGIN { srand(s); print "score,label"; for (j = 0; j < 100; j++) { x = rand(); print x "," (rand() < x) } }' > r$i.csv; done
for i in $(seq 20); do (party --input r$i.csv > out.$i 2>&1; echo $? > rc.$i) & done; wait_all 20
echo "20 processes x 100 rows: $(grep -L '^0$' rc.* | wc -l) exit non-zero, $(grep -l '^0 of 100' out.* | wc -l) store 0 of 100, rows stored by both: $(cat out.* | awk '/row\(s\) stored by both/ {s += $1} END {print s}') of 2000"; rm -f rc.* out.*

outage() { # role, seconds down
  fresh; awk 'BEGIN { srand(9); print "score,label"; for (j = 0; j < 2000; j++) { x = rand(); print x "," (rand() < x) } }' > k.csv; rm -f k.csv.rowkey
  party --input k.csv > kout 2>&1 & pp=$!
  sleep 1.5; kill -9 ${PID[$1]}; wait ${PID[$1]} 2>/dev/null; sleep $2
  if [ $1 = leader ]; then start leader 4001; else start helper 4002; fi
  wait $pp; rc=$?
  echo "2000 rows, $1 kill -9 and back after $2 s: exit $rc: $(grep 'stored by both servers' kout | head -1)"
  grep -E '^(not stored|stored by the)' kout | sed 's/^/    /'
}
outage leader 1
outage helper 10
