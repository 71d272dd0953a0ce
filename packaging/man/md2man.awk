# Renders sections of README.md as a man page, so that floe(1) and floe.yaml(5) are made
# from the text users already read there (the configuration key table above all) and
# cannot drift from it. The build runs it (CMakeLists.txt, target floe_man); nothing but
# POSIX awk is needed, so a Buildroot or Yocto build can make the pages too.
#
# Variables (-v): page (title, e.g. floe.yaml), section (1, 5), version, name (the NAME
# line's text after "\-"), sections (README headings to render, separated by |, in the
# order they appear in the file), titles (optional: "README heading=MAN TITLE" pairs
# separated by |, for the man page's own sections such as SYNOPSIS and OPTIONS; other
# headings are upper-cased), see_also (roff text for SEE ALSO, may be empty).
#
# The README's Markdown is a small subset and stays so: headings, paragraphs, fenced and
# indented code blocks, bullet lists, tables (a key table of three columns becomes one
# .TP entry per key with its default), `code`, **bold**, [links](url).

BEGIN {
	n = split(sections, want, "|")
	for (i = 1; i <= n; i++)
		wanted[want[i]] = 1
	n = split(titles, pair, "|")
	for (i = 1; i <= n; i++)
		if (split(pair[i], kv, "=") == 2)
			retitle[kv[1]] = kv[2]
	printf ".\\\" Generated from README.md by packaging/man/md2man.awk: edit the README.\n"
	printf ".TH %s %s \"\" \"floe %s\" \"floe manual\"\n", toupper(page), section, version
	printf ".SH NAME\n%s \\- %s\n", page, name
	on = 0; para = ""; incode = 0; intable = 0; ncols = 0
}

# Escapes roff's special characters and turns the inline Markdown into fonts.
function inline(s,    out, pre, m) {
	gsub(/\\/, "\\e", s)
	gsub(/…/, "...", s)
	gsub(/±/, "+/\\-", s)
	gsub(/µ/, "\\(mc", s)
	gsub(/→/, "\\(->", s)
	# Links: keep the text only.
	while (match(s, /\[[^]]*\]\([^)]*\)/)) {
		m = substr(s, RSTART, RLENGTH)
		sub(/\]\(.*/, "", m)
		s = substr(s, 1, RSTART - 1) substr(m, 2) substr(s, RSTART + RLENGTH)
	}
	out = ""
	while (match(s, /`[^`]*`|\*\*[^*]*\*\*/)) {
		pre = substr(s, 1, RSTART - 1)
		m = substr(s, RSTART, RLENGTH)
		if (substr(m, 1, 1) == "`")
			m = substr(m, 2, length(m) - 2)
		else
			m = substr(m, 3, length(m) - 4)
		gsub(/-/, "\\-", m)
		out = out pre "\\fB" m "\\fR"
		s = substr(s, RSTART + RLENGTH)
	}
	return out s
}

# A line of text must not start with a control character.
function safe(s) {
	if (s ~ /^[.']/)
		return "\\&" s
	return s
}

# Ends the paragraph or list item being gathered.
function flush_para() {
	if (para == "")
		return
	if (inlist)
		printf "%s\n", safe(inline(para))
	else
		printf ".PP\n%s\n", safe(inline(para))
	para = ""
}

function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

# A table row: a key table (key | default | meaning) gives ".TP key (default: d)";
# other tables give their first cell as the tag and the rest joined.
function table_row(line,    cells, k, i, tag, body) {
	sub(/^\|/, "", line)
	sub(/\|$/, "", line)
	k = split(line, cells, "|")
	if (line ~ /^[-| :]*$/)
		return
	if (!intable) {
		intable = 1
		header = line
		ncols = k
		return
	}
	tag = inline(trim(cells[1]))
	body = ""
	if (ncols == 3 && header ~ /default/) {
		body = inline(trim(cells[3]))
		if (trim(cells[2]) ~ /^\(.*\)$/)
			body = body " " inline(trim(cells[2]))
		else if (trim(cells[2]) != "")
			body = body " (default: " inline(trim(cells[2])) ")"
	} else {
		for (i = 2; i <= k; i++)
			body = body (i > 2 ? "; " : "") inline(trim(cells[i]))
	}
	printf ".TP\n%s\n%s\n", safe(tag), safe(body)
}

/^#+ / {
	title = $0
	sub(/^#+ /, "", title)
	if (on) {
		flush_para()
		intable = 0
	}
	on = (title in wanted)
	if (on)
		printf ".SH \"%s\"\n", (title in retitle) ? retitle[title] : toupper(title)
	next
}

!on { next }

/^```/ {
	flush_para()
	if (!incode) {
		printf ".PP\n.RS 4\n.nf\n"
		incode = 1
	} else {
		printf ".fi\n.RE\n"
		incode = 0
	}
	next
}

incode {
	printf "%s\n", safe(inline_code($0))
	next
}

# An indented block (four spaces) after a blank line is code too.
/^    [^ ]/ && para == "" && !inlist {
	printf ".PP\n.RS 4\n.nf\n%s\n.fi\n.RE\n", safe(inline_code(substr($0, 5)))
	next
}

/^\|/ {
	flush_para()
	inlist = 0
	table_row($0)
	next
}

/^- / {
	flush_para()
	inlist = 1
	para = substr($0, 3)
	printf ".IP \\(bu 2\n"
	next
}

/^[ \t]*$/ {
	flush_para()
	intable = 0
	inlist = 0
	next
}

{
	if (inlist && $0 ~ /^  /) {
		para = para " " trim($0)
		next
	}
	para = (para == "" ? $0 : para " " $0)
}

END {
	flush_para()
	if (see_also != "")
		printf ".SH \"SEE ALSO\"\n%s\n", see_also
}

# Code keeps its text; only roff's escape character needs care.
function inline_code(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	gsub(/…/, "...", s)
	return s
}
