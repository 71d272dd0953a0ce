#!/usr/bin/env bash
# A column removed from the configuration while files written under it wait in the
# spool: the commit still gives the table that column (under the id its files carry),
# optional, so the files' values read by id and the id is never handed to another
# column. The store is the stub, made to hold every data upload for a while: the table
# is read, the plan learnt, and the files wait in the spool.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
source "$(dirname "$0")/typed_s3lib.sh"
typed_s3_start "$T/s"
cfg() { typed_s3_config typed-spooled "$1"; }

cfg "{ name: status, type: int }"
echo '{"msg":"one","status":200,"took":1.5}' >"$d/in/app.log"
check "first run: the table with status" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn

# took added; the data uploads held: the table is read, the plan learnt, the file spooled.
echo 'stall=^PUT .*/data/' >"$d/stub/ctl"
cfg "{ name: status, type: int }, { name: took, type: double }"
echo '{"msg":"two","status":404,"took":2.5}' >>"$d/in/app.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "the second line goes to the spool" wait_for 60 spooled
stop_pid "$pid" || true
check "it waits in the spool" spooled

# took removed from the list, the store answers: the spooled file is committed, took kept.
: >"$d/stub/ctl"
cfg "{ name: status, type: int }"
check "third run: the spool committed" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "all committed" test "$(m spool_bytes)" = 0
check "the table has took under the id its file carries, optional" typed_s3_schema status=15:int took=16:double
typed_s3_fetch
duck "select message, status, took from read_parquet([$list], schema = map {
	11: {name: 'message', type: 'VARCHAR', default_value: NULL},
	15: {name: 'status', type: 'INTEGER', default_value: NULL},
	16: {name: 'took', type: 'DOUBLE', default_value: NULL}}) order by message" >"$d/rows"
check "both rows once, the spooled one's took read by id" diff - "$d/rows" <<<'["one",200,null]
["two",404,2.5]'
finish
