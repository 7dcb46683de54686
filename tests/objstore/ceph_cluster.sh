#!/bin/bash
# ceph_cluster.sh - a single-node Ceph cluster on loopback for the object
# store tests: one monitor, one memstore OSD and radosgw (beast) with cephx,
# on free ports, everything under one directory, no systemd.
#
#   ceph_cluster.sh start ENV    start it in a new temporary directory; print
#                                the endpoint and keys and write them to the
#                                file ENV (NAME=value lines, CEPH_DIR among
#                                them)
#   ceph_cluster.sh stop ENV     stop every daemon of the cluster ENV names,
#                                remove its directory and ENV
#
# start exits 0 when radosgw answers and the user and bucket exist; 77 when
# the cluster cannot start here (a package missing, a daemon that does not
# come up), with the reason on stderr and in ENV as OBJSTORE_TEST_SKIP,
# which the tests read to say why they skip.  On any failure the daemons
# already started are stopped again.  A cluster that ENV still names (a
# run that was killed) is stopped first.
set -u

die_skip() {
	echo "ceph_cluster: cannot start a Ceph cluster: $*" >&2
	echo "OBJSTORE_TEST_SKIP=cannot start a Ceph cluster: $*" > "$ENV"
	if [ -n "${DIR:-}" ] && [ -d "$DIR" ]; then
		stop_daemons
		[ -n "${KEEP:-}" ] || rm -rf "$DIR"
	fi
	exit 77
}

# Skip, naming the package of a missing tool (tests/packages.txt).
missing() {
	local pkg
	pkg=$(awk -v t="$1" '$1 == t { print $2; exit }' "$(dirname "$0")/../packages.txt")
	die_skip "'$1' not found (Debian package ${pkg:-unknown})"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop_daemons() {
	local pids=""
	for f in "$DIR"/run/*.pid; do
		[ -f "$f" ] || continue
		pids="$pids $(cat "$f")"
	done
	[ -n "${pids// /}" ] || return 0
	# SIGTERM, then SIGKILL after 2 s: the data is in memory (memstore) and
	# thrown away, and the OSD can take longer than that to shut down.
	kill $pids 2>/dev/null
	for _ in $(seq 20); do
		kill -0 $pids 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 $pids 2>/dev/null
	return 0
}

# Poll until "$@" succeeds, at most $1 tenths of a second.
wait_for() {
	local tenths=$1
	shift
	for _ in $(seq "$tenths"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

CEPH() { ceph -c "$DIR/ceph.conf" --connect-timeout 10 "$@"; }

write_conf() {
	cat > "$DIR/ceph.conf" <<EOF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
public network = 127.0.0.0/8
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $DIR/\$name.keyring
run dir = $DIR/run
pid file = $DIR/run/\$name.pid
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
crash dir = $DIR/crash
ms bind ipv4 = true
ms bind ipv6 = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
osd objectstore = memstore
memstore device bytes = 3221225472
osd data = $DIR/osd
osd max object name len = 460
osd max object namespace len = 64
mon data = $DIR/mon
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw data = $DIR/rgw
rgw dns name = localhost
rgw enable usage log = false
rgw thread pool size = 32
rgw gc obj min wait = 1
rgw gc processor period = 5
EOF
}

start_mon() {
	ceph-authtool --create-keyring "$DIR/mon.keyring" --gen-key -n mon. \
		--cap mon 'allow *' >/dev/null &&
	ceph-authtool --create-keyring "$DIR/client.admin.keyring" --gen-key \
		-n client.admin --cap mon 'allow *' --cap osd 'allow *' \
		--cap mgr 'allow *' >/dev/null &&
	ceph-authtool "$DIR/mon.keyring" --import-keyring \
		"$DIR/client.admin.keyring" >/dev/null &&
	monmaptool --create --addv a "[v2:127.0.0.1:$MON_PORT]" --fsid "$FSID" \
		"$DIR/monmap" >/dev/null &&
	ceph-mon -c "$DIR/ceph.conf" -i a --mkfs --monmap "$DIR/monmap" \
		--keyring "$DIR/mon.keyring" --mon-data "$DIR/mon" 2>>"$DIR/log/setup.log" &&
	ceph-mon -c "$DIR/ceph.conf" -i a --mon-data "$DIR/mon" \
		--keyring "$DIR/mon.keyring" 2>>"$DIR/log/setup.log" ||
		die_skip "ceph-mon did not start ($DIR/log/setup.log)"
	wait_for 300 CEPH mon stat || die_skip "the monitor does not answer"
}

start_osd() {
	local uuid id
	uuid=$(cat /proc/sys/kernel/random/uuid)
	mkdir -p "$DIR/osd"
	id=$(CEPH osd new "$uuid") || die_skip "'ceph osd new' failed"
	ceph-authtool --create-keyring "$DIR/osd.$id.keyring" --gen-key -n "osd.$id" \
		>/dev/null &&
	CEPH auth add "osd.$id" osd 'allow *' mon 'allow profile osd' \
		-i "$DIR/osd.$id.keyring" >/dev/null 2>&1 &&
	ceph-osd -c "$DIR/ceph.conf" -i "$id" --mkfs --osd-uuid "$uuid" \
		--keyring "$DIR/osd.$id.keyring" >>"$DIR/log/setup.log" 2>&1 &&
	ceph-osd -c "$DIR/ceph.conf" -i "$id" --keyring "$DIR/osd.$id.keyring" \
		>>"$DIR/log/setup.log" 2>&1 ||
		die_skip "ceph-osd did not start ($DIR/log/setup.log)"
	wait_for 300 osd_up || die_skip "the OSD did not come up"
}

osd_up() { CEPH osd stat 2>/dev/null | grep -q '1 up'; }

start_rgw() {
	ceph-authtool --create-keyring "$DIR/client.rgw.a.keyring" --gen-key \
		-n client.rgw.a >/dev/null &&
	CEPH auth add client.rgw.a mon 'allow rw' osd 'allow rwx' \
		-i "$DIR/client.rgw.a.keyring" >/dev/null 2>&1 &&
	radosgw -c "$DIR/ceph.conf" -n client.rgw.a \
		--keyring "$DIR/client.rgw.a.keyring" >>"$DIR/log/setup.log" 2>&1 ||
		die_skip "radosgw did not start ($DIR/log/setup.log)"
	wait_for 600 curl -sf -o /dev/null "http://127.0.0.1:$RGW_PORT/" ||
		die_skip "radosgw does not answer on 127.0.0.1:$RGW_PORT"
}

make_user_and_bucket() {
	ACCESS=EMBERTEST$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)
	SECRET=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
	radosgw-admin -c "$DIR/ceph.conf" -n client.admin user create --uid ember \
		--display-name ember --access-key "$ACCESS" --secret "$SECRET" \
		>>"$DIR/log/setup.log" 2>&1 || die_skip "'radosgw-admin user create' failed"
	BUCKET=ember-test
	# curl 7.88 signs the hash header it is given, and RGW wants one.
	curl -sf -X PUT --aws-sigv4 "aws:amz:default:s3" --user "$ACCESS:$SECRET" \
		-H "x-amz-content-sha256: $EMPTY_SHA256" "http://127.0.0.1:$RGW_PORT/$BUCKET" >>"$DIR/log/setup.log" 2>&1 ||
		die_skip "cannot create bucket '$BUCKET'"
}

start() {
	local t0=$SECONDS
	stop
	for t in ceph ceph-mon ceph-osd radosgw radosgw-admin ceph-authtool monmaptool curl python3; do
		command -v "$t" >/dev/null 2>&1 || missing "$t"
	done
	DIR=$(mktemp -d "${TMPDIR:-/tmp}/ember-ceph.XXXXXX") ||
		die_skip "cannot create a temporary directory"
	mkdir -p "$DIR"/{run,log,mon,rgw,crash} || die_skip "cannot create '$DIR'"
	FSID=$(cat /proc/sys/kernel/random/uuid)
	MON_PORT=$(free_port)
	RGW_PORT=$(free_port)
	write_conf
	start_mon
	start_osd
	start_rgw
	make_user_and_bucket
	cat > "$ENV.tmp" <<EOF
OBJSTORE_TEST_ENDPOINT=http://127.0.0.1:$RGW_PORT
OBJSTORE_TEST_REGION=default
OBJSTORE_TEST_BUCKET=$BUCKET
AWS_ACCESS_KEY_ID=$ACCESS
AWS_SECRET_ACCESS_KEY=$SECRET
CEPH_CONF=$DIR/ceph.conf
CEPH_DIR=$DIR
EOF
	mv "$ENV.tmp" "$ENV"
	cat "$ENV"
	echo "ceph_cluster: up in $((SECONDS - t0)) s under $DIR" >&2
}

# Stop the cluster ENV names, if any.
stop() {
	local dir
	[ -f "$ENV" ] || return 0
	dir=$(awk -F= '$1 == "CEPH_DIR" { print substr($0, 10) }' "$ENV")
	rm -f "$ENV"
	case "$dir" in
	*/ember-ceph.*) ;;
	*) return 0 ;; # never anything else
	esac
	[ -d "$dir" ] || return 0
	DIR=$dir stop_daemons
	rm -rf "$dir"
}

case "${1:-} ${2:+env}" in
"start env") ENV=$2; start ;;
"stop env") ENV=$2; stop ;;
*) echo "usage: $0 start|stop ENV_FILE" >&2; exit 2 ;;
esac
