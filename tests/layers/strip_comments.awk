# Prints each file given without its comments (/* ... */ across lines, and // to the
# line's end), as file:line: text, skipping lines left empty. The layer checks' grep
# runs over this, so that a comment naming a call is not taken for the call.
FNR == 1 { inc = 0 }
{
	line = $0; out = ""
	while (length(line) > 0) {
		if (inc) {
			e = index(line, "*/")
			if (!e) { line = ""; break }
			line = substr(line, e + 2); inc = 0
		} else {
			s = index(line, "/*"); d = index(line, "//")
			if (d && (!s || d < s)) { out = out substr(line, 1, d - 1); line = ""; break }
			if (!s) { out = out line; line = ""; break }
			out = out substr(line, 1, s - 1); line = substr(line, s + 2); inc = 1
		}
	}
	if (out ~ /[^[:space:]]/)
		printf "%s:%d: %s\n", FILENAME, FNR, out
}
