#!/usr/bin/env bash
# Builds, from Debian 12 (bookworm) packages, the userland file-system trees
# of the container images that the Kubernetes v1.37.0 conformance tests pull,
# so that clustersync can run those tests without Docker and without pulling
# from registry.k8s.io: the Go code in internal/images adds the Go programs
# (agnhost, ...) and assembles OCI images from these trees. Each tree is a
# complete root file system (what / of the container holds):
#
#   OUT_DIR/busybox/            for registry.k8s.io/e2e-test-images/busybox:1.37.0-2
#       upstream BusyBox 1.37.0 built from its source as the busybox image's
#       is (the Docker library's glibc variant: make defconfig and its few
#       settings; build_busybox_binary), Debian's glibc for its libraries, a
#       link for every applet, passwd and group as in the busybox image.
#       Debian's own busybox is not used here: Debian reverts the upstream
#       change that keeps environment variables whose names are not shell
#       names (data-1, which the Secret and ConfigMap environment specs
#       set), so its ash drops them from the commands it runs.
#   OUT_DIR/agnhost/            for registry.k8s.io/e2e-test-images/agnhost:2.66.1
#       without /agnhost itself: bash (also as /bin/sh), dash, curl, nc (OpenBSD),
#       dig/nslookup/host, ip/ss, socat, iperf (2), getent, ipcs, and busybox
#       for every other command the tests call (wget, ps, ...); the users and
#       groups the tests look for (user-defined-in-image, group-defined-in-image).
#   OUT_DIR/nginx/              for registry.k8s.io/e2e-test-images/nginx:1.27.0-2
#       Debian's nginx-light with a configuration for `nginx -g 'daemon off;'`
#       on port 80, serving /usr/share/nginx/html ("Welcome to nginx!"), logs
#       to stdout and stderr; busybox for a shell and the usual commands, as
#       the upstream image (Alpine) has.
#   OUT_DIR/glibc-dns-testing/  for registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1
#       bookworm's packages of priority required (what debian:bookworm-slim
#       holds) and bind9-dnsutils (dig, nslookup).
#   OUT_DIR/.complete           the trees' packages, one "TREE NAME=VERSION ARCH"
#       a line; written last, so its presence means OUT_DIR is complete.
#
# Usage: hack/conformance-rootfs.sh OUT_DIR
#
# A complete OUT_DIR is left alone ("cached"). Otherwise the trees are built
# in a temporary folder next to OUT_DIR, which is renamed to OUT_DIR only when
# every tree has passed its check, so an interrupted run leaves no partial
# OUT_DIR. It needs root (chroot, mknod, file owners) and apt-get, apt-cache,
# dpkg-deb; it installs nothing on this machine: the packages are fetched with
# apt-get download into a download cache shared by the trees and by later runs
# ($CLUSTERSYNC_DEB_CACHE, default OUT_DIR's parent/.debs) and unpacked with
# dpkg-deb. Their maintainer scripts do not run; what of their work the
# images need is done here (the alternatives links, /etc/passwd, the
# dynamic loader's cache). Each tree is merged-/usr like Debian 12's (/bin,
# /sbin, /lib and /lib64 link to their /usr folders); its image's PATH should
# be /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin. Every tree
# is checked by running its main commands in it with chroot. BusyBox's
# source (busybox_1.37.0.orig.tar.bz2, upstream's tarball, checked against
# its SHA-256) comes from Debian's archive ($CLUSTERSYNC_DEBIAN_MIRROR,
# default http://deb.debian.org/debian) into the download cache, and is
# compiled with gcc and make (about a minute on 2 cores).
set -euo pipefail

log() { echo "conformance-rootfs: $*" >&2; }
die() { log "$*"; exit 1; }

[ $# -eq 1 ] || { echo "usage: $0 OUT_DIR" >&2; exit 2; }
out=$1
case $out in /*) ;; *) out=$PWD/$out ;; esac
out=${out%/}
parent=$(dirname "$out")
marker=$out/.complete

if [ -f "$marker" ]; then
	log "cached in $out"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root (chroot into the trees, mknod, root-owned files)"
for cmd in apt-get apt-cache dpkg-deb tar bzip2 chroot ldconfig mknod curl sha256sum gcc make; do
	command -v "$cmd" >/dev/null || die "needs $cmd (a Debian or Ubuntu machine)"
done

debs=${CLUSTERSYNC_DEB_CACHE:-$parent/.debs}
image_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
start=$SECONDS

mkdir -p "$parent" "$debs"
tmp=$(mktemp -d "$parent/.conformance-rootfs.tmp.XXXXXX")
chmod 0755 "$tmp" # it becomes OUT_DIR
dl= # fetch's download folder
trap 'rm -rf "$tmp" ${dl:+"$dl"}' EXIT

# ---------------------------------------------------------------------------
# Packages of each tree.

# The busybox tree's packages are only the libraries of the BusyBox built
# from source (build_busybox_binary).
busybox_pkgs=(libc6)
busybox_version=1.37.0
busybox_sha256=3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4
debian_mirror=${CLUSTERSYNC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
agnhost_pkgs=(bash dash busybox curl netcat-openbsd bind9-dnsutils iproute2 socat iperf libc-bin util-linux)
nginx_pkgs=() # busybox and nginx-light (or the nginx package apt has), see resolve

# required_pkgs prints the names of Debian's packages of priority required
# (what debootstrap's minbase variant, and so debian:bookworm-slim, installs)
# from apt's package lists of Debian's archive, for amd64 and all.
required_pkgs() {
	local f
	# shellcheck disable=SC2016 # $(FILENAME) is apt's, not the shell's
	apt-get indextargets --format '$(FILENAME)' 'Identifier: Packages' 'Origin: Debian' |
		while read -r f; do /usr/lib/apt/apt-helper cat-file "$f"; done |
		awk -v RS= '/\nPriority: required\n/ && /\nArchitecture: (amd64|all)\n/' |
		awk '/^Package:/ { print $2 }' | sort -u
}

# pick_nginx prints the first of nginx-light, nginx-core, nginx that apt knows.
pick_nginx() {
	local p
	for p in nginx-light nginx-core nginx; do
		if apt-cache show --no-all-versions "$p" >/dev/null 2>&1; then
			echo "$p"
			return
		fi
	done
	die "nginx: none of nginx-light, nginx-core, nginx is known to apt"
}

# closure PKG... prints PKG... and everything they depend on (Depends and
# Pre-Depends, not Recommends), one "NAME=VERSION ARCH" a line: what apt
# would install on a machine that has nothing installed yet, so it picks one
# provider of a virtual package and the first of alternatives, as apt does.
closure() {
	local sim
	sim=$(apt-get -s -q -o Dir::State::status=/dev/null -o APT::Install-Recommends=false \
		-o APT::Install-Suggests=false install "$@" 2>&1) ||
		die "apt cannot resolve the packages $*: $sim"
	awk '/^Inst / {
		v = $3; sub(/^\(/, "", v)
		if (!match($0, /\[[a-z0-9]+\]\)/)) { print "cannot read the architecture of: " $0 > "/dev/stderr"; exit 1 }
		print $2 "=" v, substr($0, RSTART + 1, RLENGTH - 3)
	}' <<<"$sim" | sort
}

# deb_file "NAME=VERSION ARCH" prints the file name apt-get download gives it.
deb_file() {
	local spec=${1%% *} arch=${1##* }
	local name=${spec%%=*} version=${spec#*=}
	echo "${name}_${version//:/%3a}_$arch.deb"
}

resolve() {
	local required nginx
	if ! apt-cache show --no-all-versions busybox >/dev/null 2>&1; then
		log "packages: apt has no package lists; running apt-get update"
		apt-get update -q >&2
	fi
	mapfile -t required < <(required_pkgs)
	[ ${#required[@]} -gt 20 ] || die "glibc-dns-testing: found only ${#required[@]} packages of priority required in apt's lists (run apt-get update?)"
	nginx=$(pick_nginx)
	nginx_pkgs=("$nginx" busybox)
	# usr-is-merged: init-system-helpers depends on "usrmerge | usr-is-merged";
	# a merged-/usr system (debootstrap's, the Debian images) has the latter,
	# while apt alone would take usrmerge and with it perl.
	glibc_dns_pkgs=("${required[@]}" usr-is-merged bind9-dnsutils)
	glibc_dns_wanted="the ${#required[@]} of priority required, usr-is-merged, bind9-dnsutils"
	# Each apt-get -s takes 3-4 s of CPU (it reads all of Debian's lists),
	# so the four run side by side.
	local pids=() pid
	closure "${busybox_pkgs[@]}" >"$tmp/closure.busybox" & pids+=($!)
	closure "${agnhost_pkgs[@]}" >"$tmp/closure.agnhost" & pids+=($!)
	closure "${nginx_pkgs[@]}" >"$tmp/closure.nginx" & pids+=($!)
	closure "${glibc_dns_pkgs[@]}" >"$tmp/closure.glibc-dns-testing" & pids+=($!)
	for pid in "${pids[@]}"; do wait "$pid" || exit 1; done
	busybox_closure=$(<"$tmp/closure.busybox")
	agnhost_closure=$(<"$tmp/closure.agnhost")
	nginx_closure=$(<"$tmp/closure.nginx")
	glibc_dns_closure=$(<"$tmp/closure.glibc-dns-testing")
	rm -f "$tmp"/closure.*
}

# fetch downloads the packages of all trees that the download cache lacks,
# through a temporary folder (apt-get download writes in place); when that
# fails (apt's lists are older than the archive) it runs apt-get update,
# resolves again and retries once.
fetch() {
	local attempt missing spec
	for attempt in 1 2; do
		missing=()
		while read -r spec; do
			[ -f "$debs/$(deb_file "$spec")" ] || missing+=("$spec")
		done < <(printf '%s\n' "$busybox_closure" "$agnhost_closure" "$nginx_closure" "$glibc_dns_closure" | sort -u)
		if [ ${#missing[@]} -eq 0 ]; then
			log "packages: all in the download cache $debs"
			return
		fi
		log "packages: downloading ${#missing[@]} into $debs (apt-get download; about 50 MB and 5-15 s when none is cached)"
		dl=$(mktemp -d "$debs/.tmp.XXXXXX")
		if (cd "$dl" && apt-get download -q -o APT::Sandbox::User=root "${missing[@]%% *}" >&2); then
			mv "$dl"/*.deb "$debs"/
			rm -rf "$dl"
			dl=
			return
		fi
		rm -rf "$dl"
		dl=
		[ "$attempt" = 1 ] || die "packages: apt-get download failed again after apt-get update"
		log "packages: download failed; running apt-get update and resolving again"
		apt-get update -q >&2
		resolve
	done
}

# ---------------------------------------------------------------------------
# Building a tree.

# base_layout TREE makes the folders every tree has, merged-/usr as Debian 12.
base_layout() {
	local t=$1 d
	mkdir -p "$t"/usr/{bin,sbin,lib,lib64,local/bin,local/sbin} "$t"/{etc,dev,proc,sys,run,tmp,root,home} "$t"/var/{tmp,log,lib,cache}
	for d in bin sbin lib lib64; do ln -s "usr/$d" "$t/$d"; done
	ln -s ../run "$t/var/run"
	chmod 1777 "$t/tmp" "$t/var/tmp"
	chmod 0700 "$t/root"
}

# unpack TREE CLOSURE unpacks the packages of CLOSURE (closure's lines)
# into TREE, keeping their owners (by number) and modes; tar keeps the
# merged-/usr links, which dpkg-deb -x would replace with folders. Then it
# writes the loader's cache, as libc-bin's trigger does on Debian (the loader
# finds the libraries without it too: both lib folders are in its default path).
unpack() {
	local t=$1 spec deb
	while read -r spec; do
		deb=$debs/$(deb_file "$spec")
		dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink --numeric-owner -C "$t"
	done <<<"$2"
	ldconfig -r "$t"
}

# alternatives TREE CLOSURE makes the links that the packages' postinst
# scripts register with update-alternatives (nc -> nc.openbsd, awk -> mawk,
# which, pager, rmt), as dpkg would: LINK -> /etc/alternatives/NAME -> PATH,
# the highest priority winning, leaving out manual pages and any link whose
# path the tree already has.
alternatives() {
	local t=$1 spec deb
	local -A best_prio=() best_group=()
	local prio name group
	while read -r spec; do
		deb=$debs/$(deb_file "$spec")
		dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postinst 2>/dev/null |
			sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
			grep -E 'update-alternatives[[:space:]]+--install' |
			awk '{
				for (i = 1; i <= NF && $i != "--install"; i++) ;
				link = $(i+1); name = $(i+2); path = $(i+3); prio = $(i+4); i += 5
				group = link " " name " " path
				while ($i == "--slave") { group = group " " $(i+1) " " $(i+2) " " $(i+3); i += 4 }
				print prio, name, group
			}' || true
	done <<<"$2" >"$tmp/alternatives"
	while read -r prio name group; do
		case $group in *'$'*) continue ;; esac
		# shellcheck disable=SC2086 # split into its paths and names
		set -- $group
		[ -e "$t$3" ] || [ -L "$t$3" ] || continue
		if [ -z "${best_prio[$name]:-}" ] || [ "$prio" -gt "${best_prio[$name]}" ]; then
			best_prio[$name]=$prio
			best_group[$name]=$group
		fi
	done <"$tmp/alternatives"
	rm -f "$tmp/alternatives"
	mkdir -p "$t/etc/alternatives"
	for group in "${best_group[@]}"; do
		# shellcheck disable=SC2086 # split into its paths and names
		set -- $group
		while [ $# -ge 3 ]; do
			local link=$1 n=$2 path=$3; shift 3
			case $link in /usr/share/*) continue ;; esac
			[ -e "$t$link" ] || [ -L "$t$link" ] && continue
			[ -e "$t$path" ] || [ -L "$t$path" ] || continue
			ln -s "$path" "$t/etc/alternatives/$n"
			ln -s "/etc/alternatives/$n" "$t$link"
			log "  $(basename "$t"): $link -> $path (update-alternatives)"
		done
	done
}

# has_command TREE NAME succeeds when a folder of the image's PATH in TREE
# holds NAME.
has_command() {
	local d
	for d in ${image_path//:/ }; do
		[ -e "$1$d/$2" ] || [ -L "$1$d/$2" ] && return 0
	done
	return 1
}

# bash_sh TREE makes bash the tree's /bin/sh. Debian's dash and busybox
# ash drop the environment variables whose names are not shell names (such
# as data-1, which the Secret and ConfigMap environment specs set) from the
# commands they run, so `sh -c env` would not print them; upstream
# BusyBox's ash and bash pass them on.
bash_sh() {
	ln -sfn bash "$1/usr/bin/sh"
}

# busybox_links TREE [bin] links every applet of busybox --list-full to
# /bin/busybox, unless the tree has that path or a command of that name
# already (the Debian packages' tools come first). With "bin", sbin
# applets get a link in /bin as well: the busybox image has every applet
# in /bin, and specs run e.g. /bin/sysctl.
busybox_links() {
	local t=$1 mode=${2:-} applet n=0 path
	while read -r applet; do
		[ -n "$applet" ] || continue
		for path in "$applet" ${mode:+"bin/$(basename "$applet")"}; do
			[ -e "$t/$path" ] || [ -L "$t/$path" ] && continue
			[ "$path" = "$applet" ] && has_command "$t" "$(basename "$applet")" && continue
			mkdir -p "$t/$(dirname "$path")"
			ln -s /bin/busybox "$t/$path"
			n=$((n + 1))
		done
	done < <(run_in "$t" /bin/busybox --list-full)
	log "  $(basename "$t"): $n busybox applet links"
}

# trim TREE removes documentation, manual pages and translations.
trim() {
	rm -rf "$1"/usr/share/{doc,man,info,locale,lintian,linda}
}

# nsswitch TREE writes an /etc/nsswitch.conf that resolves host names from
# /etc/hosts and DNS, as glibc needs (without it, only files).
nsswitch() {
	cat >"$1/etc/nsswitch.conf" <<'EOF'
# Written by clustersync's hack/conformance-rootfs.sh.
passwd:         files
group:          files
shadow:         files
hosts:          files dns
networks:       files
protocols:      files
services:       files
ethers:         files
rpc:            files
EOF
}

# busybox_accounts TREE writes the /etc/passwd and /etc/group of the
# busybox image: those of buildroot's skeleton (system/skeleton/etc), which
# the Docker busybox images are built with, nobody and nogroup being 65534.
busybox_accounts() {
	cat >"$1/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
EOF
	cat >"$1/etc/group" <<'EOF'
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
lp:x:7:
mail:x:8:
kmem:x:9:
wheel:x:10:root
cdrom:x:11:
dialout:x:18:
floppy:x:19:
video:x:28:
audio:x:29:
tape:x:32:
www-data:x:33:
operator:x:37:
utmp:x:43:
plugdev:x:46:
staff:x:50:
lock:x:54:
netdev:x:82:
users:x:100:
nogroup:x:65534:
EOF
	chmod 0644 "$1/etc/passwd" "$1/etc/group"
}

# with_dev TREE CMD... runs CMD with TREE/dev/null (a character device, as
# the checks' shells need) and TREE/dev/stdout, TREE/dev/stderr (links to it,
# for nginx's logs), and removes them afterwards. A failed check ends the
# script, and the EXIT trap removes the temporary folder, them included.
with_dev() {
	local t=$1; shift
	mknod -m 0666 "$t/dev/null" c 1 3
	ln -s null "$t/dev/stdout"
	ln -s null "$t/dev/stderr"
	"$@"
	rm -f "$t/dev/null" "$t/dev/stdout" "$t/dev/stderr"
}

# run_in TREE CMD... runs CMD in TREE with chroot, with a container's
# environment rather than this shell's.
run_in() {
	local t=$1; shift
	env -i PATH="$image_path" HOME=/root chroot "$t" "$@"
}

# check TREE COMMAND [REGEX] runs COMMAND with the tree's /bin/sh in the tree
# and ends the script, naming both, when the shell or the loader cannot find
# something or (with REGEX) the output does not match REGEX.
check() {
	local t=$1 cmd=$2 want=${3:-} name rc=0 out line
	name=$(basename "$t")
	out=$(run_in "$t" /bin/sh -c "$cmd" 2>&1) || rc=$?
	if [ $rc = 126 ] || [ $rc = 127 ] ||
		grep -qiE 'not found|error while loading shared libraries|cannot execute|permission denied' <<<"$out" ||
		{ [ -n "$want" ] && ! grep -qE "$want" <<<"$out"; }; then
		log "$name: check failed: chroot $name /bin/sh -c '$cmd' (exit $rc${want:+, wanted /$want/}):"
		sed 's/^/    /' <<<"$out" >&2
		exit 1
	fi
	if [ -n "$want" ]; then line=$(grep -m1 -E "$want" <<<"$out"); else line=$(head -1 <<<"$out"); fi
	log "  $name: $cmd: $line"
}

# finish TREE CLOSURE WANTED trims the tree and says which packages it was
# asked for, how many it has with their dependencies and how big it is.
finish() {
	local t=$1 n
	trim "$t"
	n=$(grep -c . <<<"$2")
	log "$(basename "$t"): $3 -> $n packages, $(du -sh "$t" | cut -f1)"
}

# ---------------------------------------------------------------------------
# The trees.

# fetch_busybox_source puts BusyBox's source tarball into the download
# cache, unless it is there, and checks its SHA-256.
fetch_busybox_source() {
	local f=$debs/busybox_$busybox_version.orig.tar.bz2 url
	url=$debian_mirror/pool/main/b/busybox/busybox_$busybox_version.orig.tar.bz2
	if [ ! -f "$f" ]; then
		log "busybox: downloading its source from $url"
		curl -fsSL --retry 3 -o "$f.part" "$url" || die "busybox: cannot download $url (set CLUSTERSYNC_DEBIAN_MIRROR to a Debian mirror)"
		mv "$f.part" "$f"
	fi
	echo "$busybox_sha256  $f" | sha256sum -c --quiet - >&2 ||
		{ rm -f "$f"; die "busybox: $f does not have the SHA-256 $busybox_sha256; removed it, run again"; }
}

# build_busybox_binary compiles BusyBox into $tmp/busybox-build/busybox as
# the Docker library's glibc image does (https://github.com/docker-library/busybox,
# Dockerfile.builder): make defconfig, then ar with its options and inotifyd
# on, sync's options off, and no wide characters above ASCII. Its log is
# $tmp/busybox-build.log, printed when it fails.
build_busybox_binary() {
	local b=$tmp/busybox-build conf
	mkdir -p "$b"
	tar -xjf "$debs/busybox_$busybox_version.orig.tar.bz2" -C "$b" --strip-components=1
	(
		cd "$b"
		export SOURCE_DATE_EPOCH=1727395200 # 2024-09-27, BusyBox 1.37.0's release
		make defconfig
		sed -i -e 's/^CONFIG_FEATURE_SYNC_FANCY=.*/# CONFIG_FEATURE_SYNC_FANCY is not set/' .config
		for conf in CONFIG_AR=y CONFIG_FEATURE_AR_CREATE=y CONFIG_FEATURE_AR_LONG_FILENAMES=y CONFIG_LAST_SUPPORTED_WCHAR=0 CONFIG_INOTIFYD=y; do
			sed -i -e "s/^${conf%=*}=.*\$/$conf/" -e "s/^# ${conf%=*} is not set\$/$conf/" .config
			grep -q "^$conf\$" .config || echo "$conf" >>.config
		done
		yes '' | make oldconfig
		for conf in CONFIG_AR=y CONFIG_INOTIFYD=y CONFIG_LAST_SUPPORTED_WCHAR=0; do
			grep -q "^$conf\$" .config || { echo "busybox: $conf did not stick in .config" >&2; exit 1; }
		done
		make -j "$(nproc)" busybox
	) >"$tmp/busybox-build.log" 2>&1 || { tail -n 30 "$tmp/busybox-build.log" >&2; die "busybox: the build failed (its log's end above)"; }
}

build_busybox() {
	local t=$tmp/busybox
	base_layout "$t"
	unpack "$t" "$busybox_closure"
	install -m 0755 "$tmp/busybox-build/busybox" "$t/usr/bin/busybox"
	busybox_accounts "$t"
	nsswitch "$t"
	with_dev "$t" busybox_links "$t" bin
	with_dev "$t" check_busybox "$t"
	finish "$t" "$busybox_closure" "BusyBox $busybox_version (from source) and ${busybox_pkgs[*]}"
}

check_busybox() {
	local t=$1
	check "$t" 'echo ok' '^ok$'
	check "$t" 'ls /' 'etc'
	check "$t" 'cat /etc/passwd >/dev/null && echo passwd ok' 'passwd ok'
	check "$t" 'wget --help 2>&1 | head -1' 'BusyBox'
	check "$t" 'nslookup --help 2>&1 | head -1' 'BusyBox'
	check "$t" 'command -v ls' '^/'
	check "$t" 'id root' 'uid=0\(root\).*10\(wheel\)'
	check "$t" 'env -i data-1=x /bin/sh -c env' '^data-1=x$'
	check "$t" '/bin/sh -c "echo x >/no/such/file" 2>&1 || true' "^/bin/sh: can't create /no/such/file: nonexistent directory$"
	check "$t" 'busybox 2>&1 | head -1' "^BusyBox v$busybox_version "
	check "$t" 'readlink /bin/sysctl' 'busybox'
}

build_agnhost() {
	local t=$tmp/agnhost
	base_layout "$t"
	unpack "$t" "$agnhost_closure"
	alternatives "$t" "$agnhost_closure"
	bash_sh "$t"
	busybox_accounts "$t"
	# The tests run commands as, and look for, this user and group that the
	# agnhost image defines (user 1000 in group-defined-in-image 50000).
	echo 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >>"$t/etc/passwd"
	echo 'user-defined-in-image:x:1000:' >>"$t/etc/group"
	echo 'group-defined-in-image:x:50000:user-defined-in-image' >>"$t/etc/group"
	install -d -m 0755 -o 1000 -g 1000 "$t/home/user-defined-in-image"
	install -d -m 0777 "$t/uploads"
	nsswitch "$t"
	with_dev "$t" busybox_links "$t"
	with_dev "$t" check_agnhost "$t"
	finish "$t" "$agnhost_closure" "${agnhost_pkgs[*]}"
}

check_agnhost() {
	local t=$1
	check "$t" 'readlink /bin/sh' '^bash$'
	check "$t" 'env -i data-1=x /bin/sh -c env' '^data-1=x$'
	check "$t" 'dig -v 2>&1' '^DiG 9'
	check "$t" 'nslookup -version 2>&1 | head -1' '^nslookup 9'
	check "$t" 'host -V 2>&1' '^host 9'
	check "$t" 'nc -h 2>&1 | head -1' 'OpenBSD netcat'
	check "$t" 'curl --version | head -1' '^curl '
	check "$t" 'ip -V' 'iproute2'
	check "$t" 'ss -V' 'iproute2'
	check "$t" 'socat -V | head -2' 'socat version'
	check "$t" 'iperf -v 2>&1' 'iperf version 2'
	check "$t" 'getent passwd user-defined-in-image' '^user-defined-in-image:x:1000:1000:'
	check "$t" 'id user-defined-in-image' 'uid=1000\(user-defined-in-image\).*50000\(group-defined-in-image\)'
	check "$t" 'ipcs -V' 'util-linux'
	check "$t" 'wget --help 2>&1 | head -1' 'BusyBox'
	check "$t" 'ps 2>&1 | head -1' 'PID'
	check "$t" 'bash -c "echo bash ok"' '^bash ok$'
	# shellcheck disable=SC2016 # the tree's shell expands $c
	check "$t" 'for c in sh cat ls grep sleep wget ps test echo hostname mount awk nc; do command -v $c >/dev/null || echo "$c not found"; done; echo commands ok' 'commands ok'
}

build_nginx() {
	local t=$tmp/nginx
	base_layout "$t"
	unpack "$t" "$nginx_closure"
	busybox_accounts "$t"
	# nginx's workers run as nginx (101), as in the nginx image.
	echo 'nginx:x:101:101:nginx:/var/cache/nginx:/bin/false' >>"$t/etc/passwd"
	echo 'nginx:x:101:nginx' >>"$t/etc/group"
	nsswitch "$t"
	nginx_config "$t"
	with_dev "$t" busybox_links "$t"
	with_dev "$t" check_nginx "$t"
	finish "$t" "$nginx_closure" "${nginx_pkgs[*]}"
}

# nginx_config TREE replaces Debian's configuration (sites-enabled, www-data,
# a daemon) with one like the nginx image's: port 80, the pages of
# /usr/share/nginx/html, logs to stdout and stderr. The image's command is
# nginx -g 'daemon off;', so the file must not say daemon off itself.
nginx_config() {
	local t=$1 d
	rm -rf "$t/etc/nginx/sites-available" "$t/etc/nginx/sites-enabled" "$t/etc/nginx/modules-enabled" \
		"$t/etc/nginx/snippets" "$t/etc/init.d" "$t/etc/default" "$t/etc/logrotate.d" "$t/etc/ufw"
	mkdir -p "$t/etc/nginx/conf.d"
	cat >"$t/etc/nginx/nginx.conf" <<'EOF'
# Written by clustersync's hack/conformance-rootfs.sh for the stand-in of the
# nginx test image; run as nginx -g 'daemon off;'.
user nginx;
worker_processes 1;
error_log /dev/stderr notice;
pid /run/nginx.pid;

events {
    worker_connections 1024;
}

http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /dev/stdout;
    sendfile on;
    keepalive_timeout 65;
    include /etc/nginx/conf.d/*.conf;
}
EOF
	cat >"$t/etc/nginx/conf.d/default.conf" <<'EOF'
server {
    listen 80;
    # IPv4 only: nginx does not start with listen [::]:80 where the kernel
    # has no IPv6 at all (booted with ipv6.disable=1; IPv6 switched off with
    # the disable_ipv6 sysctl still binds). The nginx image's entrypoint
    # script adds the line only when the pod has IPv6; this image has no
    # entrypoint script.
    # listen [::]:80;
    server_name localhost;

    location / {
        root /usr/share/nginx/html;
        index index.html index.htm;
    }

    error_page 500 502 503 504 /50x.html;
    location = /50x.html {
        root /usr/share/nginx/html;
    }
}
EOF
	chmod 0644 "$t/etc/nginx/nginx.conf" "$t/etc/nginx/conf.d/default.conf"
	mkdir -p "$t/usr/share/nginx/html"
	cat >"$t/usr/share/nginx/html/index.html" <<'EOF'
<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>This nginx serves the Kubernetes conformance tests of a clustersync cluster.</p>
</body>
</html>
EOF
	cat >"$t/usr/share/nginx/html/50x.html" <<'EOF'
<!DOCTYPE html>
<html>
<head>
<title>Error</title>
</head>
<body>
<h1>An error occurred.</h1>
</body>
</html>
EOF
	chmod 0644 "$t/usr/share/nginx/html/index.html" "$t/usr/share/nginx/html/50x.html"
	# The folders of nginx's temporary files (Debian builds it with
	# /var/lib/nginx/*), owned by its worker user as nginx would make them,
	# and the log files of the image: links to the container's stdout and stderr.
	for d in body fastcgi proxy scgi uwsgi; do install -d -m 0700 -o 101 -g 0 "$t/var/lib/nginx/$d"; done
	mkdir -p "$t/var/log/nginx" "$t/var/cache/nginx"
	ln -sf /dev/stdout "$t/var/log/nginx/access.log"
	ln -sf /dev/stderr "$t/var/log/nginx/error.log"
}

check_nginx() {
	local t=$1
	check "$t" 'nginx -t 2>&1' 'test is successful'
	check "$t" 'nginx -V 2>&1' '^nginx version'
	check "$t" 'echo ok; ls /usr/share/nginx/html' 'index.html'
}

build_glibc_dns() {
	local t=$tmp/glibc-dns-testing
	base_layout "$t"
	unpack "$t" "$glibc_dns_closure"
	alternatives "$t" "$glibc_dns_closure"
	debian_setup "$t"
	with_dev "$t" check_glibc_dns "$t"
	finish "$t" "$glibc_dns_closure" "$glibc_dns_wanted"
}

# debian_setup TREE does what of the postinst scripts of base-passwd,
# passwd, libc-bin, base-files and tzdata a debian:bookworm-slim image shows.
debian_setup() {
	local t=$1 d
	install -m 0644 "$t/usr/share/base-passwd/passwd.master" "$t/etc/passwd"
	install -m 0644 "$t/usr/share/base-passwd/group.master" "$t/etc/group"
	# shadowconfig on: the shadow files, every password locked.
	awk -F: '{ print $1 ":*:19000:0:99999:7:::" }' "$t/etc/passwd" >"$t/etc/shadow"
	awk -F: '{ print $1 ":*::" $4 }' "$t/etc/group" >"$t/etc/gshadow"
	chown 0:42 "$t/etc/shadow" "$t/etc/gshadow"
	chmod 0640 "$t/etc/shadow" "$t/etc/gshadow"
	[ -e "$t/etc/nsswitch.conf" ] || install -m 0644 "$t/usr/share/libc-bin/nsswitch.conf" "$t/etc/nsswitch.conf"
	grep -qE '^hosts:[[:space:]]+files dns' "$t/etc/nsswitch.conf" ||
		sed -i -E 's/^hosts:.*/hosts:          files dns/' "$t/etc/nsswitch.conf"
	install -m 0644 "$t/usr/share/base-files/dot.profile" "$t/root/.profile"
	install -m 0644 "$t/usr/share/base-files/dot.bashrc" "$t/root/.bashrc"
	[ -e "$t/etc/profile" ] || install -m 0644 "$t/usr/share/base-files/profile" "$t/etc/profile"
	[ -e "$t/etc/motd" ] || install -m 0644 "$t/usr/share/base-files/motd" "$t/etc/motd"
	for d in mnt srv opt etc/opt var/opt media; do install -d -m 0755 "$t/$d"; done
	install -d -m 2775 -g 8 "$t/var/mail"
	mkdir -p "$t/var/spool"
	ln -s ../mail "$t/var/spool/mail"
	install -d -m 1777 "$t/run/lock"
	ln -s /run/lock "$t/var/lock"
	[ -e "$t/etc/dpkg/origins/default" ] || ln -s debian "$t/etc/dpkg/origins/default"
	ln -sf /usr/share/zoneinfo/Etc/UTC "$t/etc/localtime"
	echo Etc/UTC >"$t/etc/timezone"
}

check_glibc_dns() {
	local t=$1
	check "$t" 'dig -v 2>&1' '^DiG 9'
	check "$t" 'nslookup -version 2>&1 | head -1' '^nslookup 9'
	check "$t" 'getent hosts localhost || true; echo getent ok' 'getent ok'
	check "$t" 'ls /bin | head' '.'
	check "$t" 'awk "BEGIN { print \"awk ok\" }"' '^awk ok$'
	check "$t" 'id nobody' 'uid=65534\(nobody\)'
}

# ---------------------------------------------------------------------------

main() {
	log "building the conformance images' trees into $out (usually 1.5-2 min on 2 cores, most of it compiling BusyBox, once per machine; about 10 s more when the packages are not downloaded yet)"
	local t0=$SECONDS
	resolve
	log "packages: resolved with apt in $((SECONDS - t0)) s"
	fetch
	fetch_busybox_source
	t0=$SECONDS
	build_busybox_binary
	log "busybox: BusyBox $busybox_version compiled in $((SECONDS - t0)) s"
	build_busybox
	build_agnhost
	build_nginx
	build_glibc_dns
	{
		echo "# Written by clustersync's hack/conformance-rootfs.sh: each tree's packages (Debian $(cat "$tmp/glibc-dns-testing/etc/debian_version"))."
		echo "busybox busybox=$busybox_version source"
		sed 's/^/busybox /' <<<"$busybox_closure"
		sed 's/^/agnhost /' <<<"$agnhost_closure"
		sed 's/^/nginx /' <<<"$nginx_closure"
		sed 's/^/glibc-dns-testing /' <<<"$glibc_dns_closure"
	} >"$tmp/.complete"
	if [ -e "$out" ] && [ ! -f "$marker" ]; then
		log "removing the incomplete $out"
		rm -rf "$out"
	fi
	if ! mv -T "$tmp" "$out" 2>/dev/null; then
		[ -f "$marker" ] || die "cannot rename $tmp to $out"
		log "another run completed $out meanwhile; keeping that"
		return
	fi
	trap - EXIT
	log "done in $((SECONDS - start)) s: $out/{busybox,agnhost,nginx,glibc-dns-testing}"
}

main
