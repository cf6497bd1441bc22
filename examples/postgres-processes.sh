#!/bin/bash
# Two fedecdf server processes per role on one local PostgreSQL (issue 27):
# each role's two share a schema, created here and dropped on exit, and
# take sealed uploads on addresses of their own, both listed in the
# manifest; the first of each coordinates, the second stands by; the
# standby leader also answers analysts on --query-listen (an address not
# in the manifest): a re-read of a release and a status from the
# database. Parties spread their uploads over both (failing over when one
# is down), the coordinators are killed with SIGKILL, the standbys take
# over, and a release counts every row once. Needs psql and a database the user may
# create schemas in; about half a minute.
#   go build -o /tmp/fedecdf ./cmd/fedecdf && examples/postgres-processes.sh /tmp/fedecdf 'postgres://postgres@/postgres?host=/tmp/pg'
set -eu
B=$(readlink -f "$1"); DSN=$2; W=$(mktemp -d); X=fedecdf_example_$$
sep='?'; case $DSN in *\?*) sep='&' ;; esac
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; psql -q "$DSN" -c "SET client_min_messages = warning; DROP SCHEMA ${X}_leader CASCADE; DROP SCHEMA ${X}_helper CASCADE"; rm -rf $W' EXIT
psql -q "$DSN" -c "CREATE SCHEMA ${X}_leader; CREATE SCHEMA ${X}_helper"
cd $W
for k in leader helper analyst; do $B keygen --output $k.key >/dev/null; done
$B manifest --output m.json --dataset d \
  --leader leader.key.pub --leader-addr /ip4/127.0.0.1/tcp/4101,/ip4/127.0.0.1/tcp/4111 --leader-upload 127.0.0.1:7101,127.0.0.1:7111 \
  --helper helper.key.pub --helper-addr /ip4/127.0.0.1/tcp/4102,/ip4/127.0.0.1/tcp/4112 --helper-upload 127.0.0.1:7102,127.0.0.1:7112 \
  --analyst analyst.key.pub --bins 64 --mechanism tree --epsilon 1 --budget-epsilon 4 --min-reports 1 >/dev/null
declare -A PID
start() { # role, process number, libp2p port, upload port, other flags
  $B server --role $1 --key $1.key --manifest m.json --listen /ip4/127.0.0.1/tcp/$3 --upload-listen 127.0.0.1:$4 \
    --store "$DSN${sep}search_path=${X}_$1" --log-level info "${@:5}" 2>>$1-$2.log &
  PID[$1$2]=$!; sleep 1
}
start helper 1 4102 7102; start helper 2 4112 7112; start leader 1 4101 7101; start leader 2 4111 7111 --query-listen /ip4/127.0.0.1/tcp/4121
Q=/ip4/127.0.0.1/tcp/4121 # the standby leader's query address
rows() { awk -v s=$1 'BEGIN { srand(s); print "score,label"; for (j = 0; j < 300; j++) { x = rand(); print x "," (rand() < x) } }'; }
rows 1 > a.csv; rows 2 > b.csv; rows 3 > c.csv
$B party --manifest m.json --input a.csv | head -1
$B party --manifest m.json --input b.csv | head -1
echo "coordinators: $(grep -l 'coordinator=true' *.log | tr '\n' ' '); standing by: $(grep -l 'standing by' *.log | tr '\n' ' ')"
$B status --manifest m.json --key analyst.key | grep -A2 'processes:'
R=$($B query --manifest m.json --key analyst.key --format json ecdf | sed -n 's/.*"release": *"\([0-9a-f]*\)".*/\1/p')
echo "release $R, re-read through the standby:"
$B query --manifest m.json --key analyst.key --leader-process $Q --release $R ecdf | head -2
echo "status through the standby:"
$B status --manifest m.json --key analyst.key --leader-process $Q | grep -E 'budget spent|releases:|UNREACHABLE'
$B party --manifest m.json --input c.csv > c.out & P=$!
sleep 0.5; kill -9 ${PID[leader1]} ${PID[helper1]}
wait $P || true; head -1 c.out
echo "taken over: $(grep -l 'taking over' *.log | tr '\n' ' ')"
$B query --manifest m.json --key analyst.key ecdf | head -3
