#!/usr/bin/python3
"""The power-cut tests' view of a store that a cut does not touch (an S3 server, a REST
catalog's disk): its journal of changes, each placed among floe's recorded file
operations by the recording's size when the change came (its MARK).

  store_journal.py ranges ENDS JOURNAL   for each crash point P (0..number of operations),
                                         "P LO HI": the store may hold the first M changes
                                         of the journal, for every M in LO..HI
  store_journal.py image JOURNAL M DIR   writes the objects the first M changes leave
                                         into DIR (absent or empty), as DIR/BUCKET/KEY

ENDS is `crashgen ends`' output; JOURNAL the directory s3_stub.py's journal= fills
(index lines "SEQ METHOD BUCKET/KEY MARK", a PUT's body in JOURNAL/SEQ). A change that
came after P operations had been recorded cannot be in the store at point P; one that came
before operation P was recorded must be; one in between may be or not."""
import bisect
import os
import sys


def changes(journal):
    path = os.path.join(journal, "index")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


def ranges(ends_path, journal):
    with open(ends_path) as f:
        ends = [int(x) for x in f if x.strip()]
    # before[i]: how many operations were recorded whole when change i came.
    before = [bisect.bisect_right(ends, int(c[3])) for c in changes(journal)]
    for p in range(len(ends) + 1):
        lo = sum(1 for b in before if b < p)
        hi = sum(1 for b in before if b <= p)
        print(p, lo, hi)


def image(journal, m, out):
    for seq, method, name, _ in changes(journal)[:m]:
        path = os.path.join(out, name)
        if method == "DELETE":
            if os.path.exists(path):
                os.unlink(path)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(os.path.join(journal, seq), "rb") as src, open(path, "wb") as dst:
            dst.write(src.read())


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "ranges":
        ranges(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "image":
        os.makedirs(sys.argv[4], exist_ok=True)
        image(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
