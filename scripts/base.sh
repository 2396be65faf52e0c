#!/bin/bash
# Make the base tree: $TREE, a git repo whose tag "base" is the unpatched
# kernel.  Sources, first that applies: KERNEL_TREE (a net-next checkout,
# cloned with --shared so the user's repo is never written), LINUX_SRC_TARBALL,
# else Debian's linux-source-7.3 package fetched through a private apt setup.
. "$(dirname "$0")/lib.sh"

if git -C "$TREE" rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
	[ -d "$BASE_TREE" ] || tgit worktree add -q --detach "$BASE_TREE" base
	exit 0
fi
rm -rf "$TREE" "$BASE_TREE"
mkdir -p "$(dirname "$TREE")" "$(dirname "$BASE_TREE")"

fetch_deb() {
	local apt=$BUILD/apt
	mkdir -p "$apt/lists/partial" "$apt/archives/partial"
	echo "deb http://deb.debian.org/debian experimental main" >"$apt/sources.list"
	local o=(-o "Dir::Etc::SourceList=$apt/sources.list"
		 -o Dir::Etc::SourceParts=/dev/null
		 -o "Dir::State::Lists=$apt/lists"
		 -o "Dir::Cache::Archives=$apt/archives"
		 -o "Dir::Cache=$apt" -o APT::Get::List-Cleanup=0)
	say "base: fetching linux-source-7.3=$BASE_DEB_VERSION (experimental)"
	apt-get -qq "${o[@]}" update >&2 ||
		die "apt update of the experimental suite failed"
	(cd "$apt" && apt-get -qq "${o[@]}" download \
		"linux-source-7.3=$BASE_DEB_VERSION") >&2 ||
		die "download of linux-source-7.3=$BASE_DEB_VERSION failed"
	dpkg-deb --fsys-tarfile "$apt"/linux-source-7.3_*.deb |
		tar -x -C "$apt" ./usr/src/linux-source-7.3.tar.xz ||
		die "no linux-source-7.3.tar.xz in the downloaded package"
	echo "$apt/usr/src/linux-source-7.3.tar.xz"
}

fixed_date() {
	GIT_AUTHOR_DATE="2026-11-01T00:00:00Z" \
	GIT_COMMITTER_DATE="2026-11-01T00:00:00Z" "$@"
}

if [ -n "${KERNEL_TREE:-}" ]; then
	git -C "$KERNEL_TREE" rev-parse -q --verify "${BASE_REF:-HEAD}^{commit}" \
		>/dev/null || die "KERNEL_TREE=$KERNEL_TREE: no commit ${BASE_REF:-HEAD}"
	say "base: $KERNEL_TREE at ${BASE_REF:-HEAD} (cloned, the tree itself is untouched)"
	git clone -q --shared --no-checkout "$KERNEL_TREE" "$TREE"
	tgit checkout -q --detach "$(git -C "$KERNEL_TREE" rev-parse "${BASE_REF:-HEAD}")"
	tgit tag base
else
	tarball=${LINUX_SRC_TARBALL:-}
	[ -n "$tarball" ] || tarball=$(fetch_deb)
	[ -f "$tarball" ] || die "tarball $tarball: no such file"
	sum=$(sha256sum "$tarball" | cut -d' ' -f1)
	[ "$sum" = "$BASE_SHA256" ] ||
		die "tarball $tarball: sha256 $sum, expected $BASE_SHA256"
	say "base: unpacking $(basename "$tarball") (sha256 ok)"
	rm -rf "$TREE.tmp"; mkdir -p "$TREE.tmp"
	tar -xJf "$tarball" -C "$TREE.tmp" --strip-components=1 ||
		die "tarball $tarball: unpack failed"
	mv "$TREE.tmp" "$TREE"
	tgit init -q -b base-import
	tgit config gc.auto 0
	# Debian's top-level .gitignore ends in "/*": add everything once with -f.
	tgit add -f -A
	fixed_date tgit commit -q -m "Linux 7.3-rc7 (Debian linux-source-7.3 $BASE_DEB_VERSION)"
	tgit tag base
fi
tgit checkout -q -B series base
tgit worktree add -q --detach "$BASE_TREE" base
say "base: $(tgit log -1 --format='%h %s' base)"
