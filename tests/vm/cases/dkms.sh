# DKMS: `make dkms-src` lays out the module's source as dkms.conf expects,
# and `dkms build` (with trees of its own, nothing installed on the host)
# builds wafer.ko against the cached Debian headers; the module it built is
# for that kernel and carries the same symbols as `make module`'s.
# No guest: this case runs on the host (the module is the VM tier's).
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
command -v dkms >/dev/null || die "dkms is not installed (tests/setup/setup installs it)"
krelease=$(tests/setup/setup --print-krelease)
kdir=$(tests/setup/setup --print-kdir)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
tmp=$(mktemp -d "$build/vm/dkms.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory dkms-src DESTDIR="$tmp/root" ||
	die "make dkms-src failed"
src=$tmp/root/usr/src/wafer-$version
[ -f "$src/dkms.conf" ] && [ -f "$src/Kbuild" ] || die "make dkms-src: no dkms.conf or Kbuild in $src"
mkdir -p "$tmp/tree"
dkms build -m wafer -v "$version" -k "$krelease" --kernelsourcedir "$kdir" \
	--sourcetree "$tmp/root/usr/src" --dkmstree "$tmp/tree" >"$tmp/build.log" 2>&1 || {
	tail -30 "$tmp/build.log"
	find "$tmp/tree" -name make.log -exec tail -30 {} \;
	die "dkms build failed"
}
ko=$(find "$tmp/tree" -name 'wafer.ko*' | head -1)
[ -n "$ko" ] || die "dkms build made no wafer.ko"
vermagic=$(modinfo -F vermagic "$ko")
case "$vermagic" in
"$krelease "*) ;;
*) die "the DKMS module's vermagic '$vermagic' is not for $krelease" ;;
esac
[ -f "$build/wafer.ko" ] || die "no build/wafer.ko to compare with (make module)"
# The compiler's clone suffixes (.isra.0, .constprop.0, .cold) depend on
# the flags (make module builds with W=1, dkms without): names without them.
symbols() {
	nm "$1" | awk '$2 ~ /[TtDdBbRr]/ { print $3 }' |
		sed -E 's/\.(isra|constprop|part|cold|localalias)(\.[0-9]+)?//g' | sort -u | md5sum
}
want=$(symbols "$build/wafer.ko")
got=$(symbols "$ko")
[ "$want" = "$got" ] || die "the DKMS module's symbols differ from make module's"
echo "dkms build: wafer $version for $krelease ($(stat -c %s "$ko") bytes, vermagic $vermagic)"
