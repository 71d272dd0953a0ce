#!/usr/bin/env bash
# Builds floe's Debian package for one architecture: packaging/deb/build.sh ARCH, with
# ARCH amd64, arm64 or armhf (the last two cross-built on an amd64 machine with the
# multiarch libraries packaging/dev/install-deps.sh test installs), at the version of the
# newest entry of packaging/debian/changelog.
# The package lands in $FLOE_DEB_OUT (default build-deb/), with its lintian report when
# lintian is installed. dpkg-buildpackage builds in a copy of the tree, made from git's
# file list (or a plain copy outside git), with packaging/debian as debian/.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
[ $# = 1 ] || { echo "usage: packaging/deb/build.sh amd64|arm64|armhf" >&2; exit 2; }
ARCH=$1
OUT=${FLOE_DEB_OUT:-$SRC/build-deb}
case "$ARCH" in amd64 | arm64 | armhf) ;; *) echo "build.sh: unknown architecture $ARCH" >&2; exit 2 ;; esac

WORK=$OUT/work-$ARCH
rm -rf "$WORK"
mkdir -p "$WORK/floe"
# The copy has no git: the commit goes to debian/rules through the environment (empty
# outside git).
FLOE_GIT_COMMIT=$(git -C "$SRC" rev-parse --short=12 HEAD 2>/dev/null || true)
export FLOE_GIT_COMMIT
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
	# Tracked and new files, as they are in the work tree; build directories and
	# node_modules are ignored by .gitignore.
	git -C "$SRC" ls-files -z --cached --others --exclude-standard |
		(cd "$SRC" && xargs -0 cp --parents -t "$WORK/floe" 2>/dev/null || true)
else
	tar -C "$SRC" --exclude='./build*' --exclude=node_modules -cf - . | tar -C "$WORK/floe" -xf -
fi
cp -r "$SRC/packaging/debian" "$WORK/floe/debian"
jobs=${FLOE_DEB_JOBS:-2}
# Cross packages are built without the journal input (profile pkg.floe.nojournal): its
# libsystemd-dev would have to be installed for the target architecture.
profiles=nocheck
[ "$ARCH" = "$(dpkg --print-architecture)" ] || profiles=nocheck,pkg.floe.nojournal
(cd "$WORK/floe" && DEB_BUILD_OPTIONS="nocheck parallel=$jobs" \
	dpkg-buildpackage -b -us -uc --host-arch="$ARCH" -P"$profiles" >"$WORK/build.log" 2>&1) || {
	tail -40 "$WORK/build.log" >&2
	echo "build.sh: dpkg-buildpackage failed; the log is $WORK/build.log" >&2
	exit 1
}
version=$(cd "$WORK/floe" && dpkg-parsechangelog -S Version)
deb=floe_${version}_${ARCH}.deb
mv -f "$WORK/$deb" "$OUT/"
mv -f "$WORK"/floe-dbgsym_"${version}"_"${ARCH}".deb "$OUT/" 2>/dev/null || true
echo "$OUT/$deb"
if command -v lintian >/dev/null 2>&1; then
	# The report is kept next to the package; the tests read it.
	lintian --fail-on error,warning "$OUT/$deb" >"$OUT/lintian-$ARCH.txt" 2>&1 || {
		cat "$OUT/lintian-$ARCH.txt" >&2
		echo "build.sh: lintian found errors or warnings in $deb" >&2
		exit 1
	}
fi
rm -rf "$WORK"
