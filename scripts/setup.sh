#!/bin/bash
# Install what the workbench needs: Debian packages (skipped when present)
# and a sparse new enough for this tree (bookworm's 0.6.4 fails the tree's
# checker-valid.sh; sid's runs through its own dynamic loader).
. "$(dirname "$0")/lib.sh"

pkgs=(build-essential flex bison bc libelf-dev libssl-dev cpio ccache
      qemu-system-x86 busybox-static ethtool iproute2 coccinelle codespell
      python3-yaml python3-matplotlib python3-ply git rsync kmod libmnl-dev pkg-config
      libcap-dev libnuma-dev git-email b4 jq xz-utils)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	say "setup: apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -qq update && apt-get -qq install -y "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
fi

sp=$BUILD/sparse
if [ ! -x "$sp/sparse" ]; then
	say "setup: fetching sparse from sid into $sp"
	rm -rf "$sp"; mkdir -p "$sp/lists/partial" "$sp/debs"
	echo "deb http://deb.debian.org/debian sid main" >"$sp/sources.list"
	o=(-o "Dir::Etc::SourceList=$sp/sources.list" -o Dir::Etc::SourceParts=/dev/null
	   -o "Dir::State::Lists=$sp/lists" -o "Dir::Cache=$sp" -o APT::Get::List-Cleanup=0)
	apt-get -qq "${o[@]}" update >&2 || die "apt update of sid failed"
	(cd "$sp/debs" && apt-get -qq "${o[@]}" download sparse libc6 libxml2-16 \
		libsqlite3-0 libicu78 liblzma5 zlib1g) >&2 || die "sparse download from sid failed"
	for d in "$sp"/debs/*.deb; do dpkg-deb -x "$d" "$sp/root"; done
	lib=$sp/root/usr/lib/x86_64-linux-gnu
	cat >"$sp/sparse" <<EOW
#!/bin/sh
exec $lib/ld-linux-x86-64.so.2 --library-path $lib $sp/root/usr/bin/sparse "\$@"
EOW
	chmod +x "$sp/sparse"
	"$sp/sparse" --version >/dev/null || die "sid's sparse does not run here"
fi
