#!/usr/bin/env python3
"""Checks the page index of Parquet files with its own small Thrift compact decoder
(DuckDB's parquet_metadata does not show it): the column chunks of each row group
tile its byte range (in any order: floe writes the largest column first), every column chunk has a ColumnIndex and
an OffsetIndex whose pages tile the chunk's data pages exactly, start at row 0, point
at data page headers, and whose per-page lists all have one entry per page; `ts` pages
must be in ASCENDING order. With --none: no chunk may have a page index.
usage: pq_pageindex.py [--none] FILE..."""
import struct
import sys


class R:
    def __init__(self, b, at=0):
        self.b, self.at = b, at

    def byte(self):
        v = self.b[self.at]
        self.at += 1
        return v

    def uvar(self):
        v, s = 0, 0
        while True:
            c = self.byte()
            v |= (c & 0x7F) << s
            s += 7
            if not c & 0x80:
                return v

    def svar(self):
        u = self.uvar()
        return (u >> 1) ^ -(u & 1)

    def value(self, t):
        if t in (1, 2):
            return t == 1
        if t == 3:
            return self.byte()
        if t in (4, 5, 6):
            return self.svar()
        if t == 7:
            self.at += 8
            return None
        if t == 8:
            n = self.uvar()
            v = self.b[self.at:self.at + n]
            self.at += n
            return v
        if t in (9, 10):
            h = self.byte()
            n, et = h >> 4, h & 15
            if n == 15:
                n = self.uvar()
            if et in (1, 2):
                return [self.byte() == 1 for _ in range(n)]
            return [self.value(et) for _ in range(n)]
        if t == 12:
            return self.struct()
        raise ValueError("thrift type %d" % t)

    def struct(self):
        d, last = {}, 0
        while True:
            h = self.byte()
            if h == 0:
                return d
            t, delta = h & 15, h >> 4
            fid = last + delta if delta else self.svar()
            last = fid
            d[fid] = self.value(t)


def check(path, none):
    b = open(path, "rb").read()
    assert b[:4] == b"PAR1" and b[-4:] == b"PAR1", "not framed by PAR1"
    flen = struct.unpack("<I", b[-8:-4])[0]
    fmd = R(b, len(b) - 8 - flen).struct()
    chunks = pages = 0
    for rg in fmd[4]:
        # The chunks tile the row group's byte range, in whatever order they were written.
        spans = sorted((cc[3].get(11, cc[3][9]), cc[3][7]) for cc in rg[1])
        at = rg[5]
        for start, length in spans:
            assert start == at, "row group chunks do not tile its range"
            at += length
        assert at - rg[5] == rg[6], "row group total_compressed_size is wrong"
        for cc in rg[1]:
            md = cc[3]
            name = ".".join(p.decode() for p in md[3])
            chunks += 1
            if none:
                assert not any(k in cc for k in (4, 5, 6, 7)), name + ": has a page index"
                continue
            assert all(k in cc for k in (4, 5, 6, 7)), name + ": no page index"
            oi = R(b, cc[4]).struct()
            assert R(b, cc[4]).at + cc[5] <= len(b)
            locs = oi[1]
            start = md.get(11, md[9])
            assert locs[0][1] == md[9], name + ": first page is not data_page_offset"
            at = md[9]
            for i, loc in enumerate(locs):
                assert loc[1] == at, name + ": pages are not contiguous"
                hdr = R(b, loc[1]).struct()
                assert hdr[1] in (0, 3), name + ": offset index points at a non-data page"
                at += loc[2]
                assert loc.get(3, 0) >= (locs[i - 1][3] if i else 0)
            assert locs[0][3] == 0 and locs[-1][3] < rg[3]
            assert at == start + md[7], name + ": pages do not end where the chunk ends"
            ci = R(b, cc[6]).struct()
            n = len(locs)
            assert len(ci[1]) == n and len(ci[2]) == n and len(ci[3]) == n and len(ci[5]) == n, \
                name + ": ColumnIndex lists do not match the pages"
            assert ci[4] in (0, 1, 2)
            if name == "ts":
                assert ci[4] == 1, "ts pages are not ASCENDING"
                mins = [struct.unpack("<q", v)[0] for v in ci[2]]
                assert mins == sorted(mins)
            st = md.get(12, {})
            assert sum(ci[5]) == st.get(3, 0), name + ": page null counts do not add up"
            pages += n
    print("%s: %d chunks, %d pages indexed" % (path, chunks, pages))


def main():
    args = sys.argv[1:]
    none = "--none" in args
    for f in [a for a in args if a != "--none"]:
        check(f, none)


main()
