# Sourced by the benchmarks that run rsyslog and syslog-ng beside floe (idle.sh, tail.sh,
# parse.sh), from the top of the tree.
#
# Where the daemons are: the private copies under /opt/floe-bench (packaging/dev/
# install-deps.sh bench), else the machine's own. RSYSLOGD and SYSLOGNG are the programs
# (a path that is not executable when neither is there), RS_MODDIR and SNG_LIB their
# module directories (empty: the installed daemon's own).
BENCH_OPT=/opt/floe-bench
RSYSLOGD=$BENCH_OPT/rsyslog/usr/sbin/rsyslogd
RS_MODDIR=$BENCH_OPT/rsyslog/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/rsyslog
SYSLOGNG=$BENCH_OPT/syslog-ng-core/usr/sbin/syslog-ng
SNG_LIB=$BENCH_OPT/syslog-ng-core/usr/lib/syslog-ng
if [ ! -x "$RSYSLOGD" ] && command -v rsyslogd >/dev/null; then
	RSYSLOGD=$(command -v rsyslogd)
	RS_MODDIR=
fi
if [ ! -x "$SYSLOGNG" ] && command -v syslog-ng >/dev/null; then
	SYSLOGNG=$(command -v syslog-ng)
	SNG_LIB=
fi

# bench_workdir NAME: W, a fresh work directory /tmp/floe-bench-NAME.*, removed on exit
# (kept with KEEP=1), and DAEMON, the PID of the daemon the benchmark runs (empty: none),
# which is stopped by its PID on exit, whatever happened.
bench_workdir() {
	W=$(mktemp -d "/tmp/floe-bench-$1.XXXXXX")
	DAEMON=
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}
bench_cleanup() {
	if [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null; then
		kill -TERM "$DAEMON" 2>/dev/null || true
		sleep 1
		kill -KILL "$DAEMON" 2>/dev/null || true
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $W"; else rm -rf "$W"; fi
}
