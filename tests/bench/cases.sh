# shellcheck shell=bash
# The agent's benchmark cases, shared by typed.sh (figures) and same_files.sh (identity
# of the files two builds write): the generated access log and each case's configuration.

# gen_access OUT N: N Apache combined lines (deterministic, no line repeats, one day in
# order) into OUT.
gen_access() {
	python3 - "$1" "$2" <<'PY'
import random, sys
out, n = sys.argv[1], int(sys.argv[2])
r = random.Random(26)
months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
methods = ["GET"] * 8 + ["POST", "HEAD"]
paths = ["/", "/index.html", "/api/v1/items", "/static/app.js", "/img/logo.png", "/login"]
refs = ["-", "https://example.com/", "https://example.com/search?q=floe", "https://news.example.org/"]
agents = ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
          "curl/8.5.0", "Googlebot/2.1 (+http://www.google.com/bot.html)"]
with open(out, "w") as a:
    for i in range(n):
        ip = f"{r.randrange(1, 224)}.{r.randrange(256)}.{r.randrange(256)}.{r.randrange(1, 255)}"
        t = i * 86400 // n
        clf = f"03/{months[11]}/2026:{t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d} +0000"
        meth, path = r.choice(methods), f"{r.choice(paths)}?id={i}"
        status = r.choice(["200"] * 12 + ["301", "304", "404", "500", "502", "503"])
        size = r.randrange(0, 100000)
        a.write(f'{ip} - - [{clf}] "{meth} {path} HTTP/1.1" {status} {size} "{r.choice(refs)}" "{r.choice(agents)}"\n')
PY
}

# Each case's input options and table keys. The access-log cases: parser none; the
# built-in parser with its natural typed columns; the same with every field in attrs;
# a regex with a typed columns list; the message left out of parsed lines. The others
# fit the loghub samples: syslog_file (Linux, OpenSSH), logfmt and json (any line: what
# they do not take is counted and kept), a regex for the Apache error log.
ACCESS_PATTERN='^(?<client>[0-9.]+) [^ ]+ [^ ]+ \[(?<time>[^]]+)\] "(?<method>[A-Z]+) (?<path>[^ ]+) [^"]+" (?<status>[0-9]{3}) (?<bytes>[0-9]+) "(?<referer>[^"]*)" "(?<agent>[^"]*)"$'
# shellcheck disable=SC2034 # used by the scripts that source this file
declare -A CASE_OPTS=(
	[none]=""
	[combined_typed]="parser: apache_combined"
	[combined_attrs]="parser: apache_combined"
	[regex_typed]="parser: regex
    pattern: '$ACCESS_PATTERN'
    timestamp: { field: time, format: clf }"
	[combined_unparsed]="parser: apache_combined"
	[syslog]="parser: syslog_file"
	[logfmt]="parser: logfmt"
	[json]="parser: json"
	[apache_err]="parser: regex
    pattern: '^\\[(?<time>[^]]+)\\] \\[(?<level>[a-z]+)\\] (?<msg>.*)\$'")
declare -A CASE_COLS=(
	[combined_attrs]="    columns: []"
	[regex_typed]="    columns: [ { name: status, type: int }, { name: bytes, type: long } ]"
	[combined_unparsed]="    message: unparsed")

# case_config CASE LOG DIR [AGENT-KEYS]: DIR/floe.yaml, CASE's input tailing LOG from its
# beginning into a ZSTD table in DIR/warehouse, its state in DIR/state; AGENT-KEYS are
# further keys of `agent:` ("compress_threads: 0").
case_config() {
	local c=$1 log=$2 d=$3 more=${4:+, $4}
	mkdir -p "$d"
	cat >"$d/floe.yaml" <<-YAML
	agent: { id: bench-typed, state_dir: $d/state$more }
	inputs:
	  - type: tail
	    paths: ["$log"]
	    start_at: beginning
	    ${CASE_OPTS[$c]}
	tables:
	  logs:
	    codec: zstd
	${CASE_COLS[$c]:-}
	lake:
	  warehouse: $d/warehouse
	YAML
}
