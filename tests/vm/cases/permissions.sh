# The device node's permission model: `make install` lands the CLI, library,
# header and the udev rule; in the guest, udevd with that rule makes the
# accel nodes root:wafer 0660 (and leaves a DRM device, vgem, alone); a
# member of group wafer opens them and runs the shared model, a non-member
# gets EACCES and a CLI message naming the node, root still works, and
# neither user can read debugfs or write the driver's sysfs files.
# wafer-vm: stock-only
# It starts udevd with its rules: a guest of its own.
# wafer-vm: own-guest
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}

mkdir -p "$build/vm"
dest=$(mktemp -d "$build/vm/install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
# The guest's unprivileged users traverse it (mktemp made it 0700).
chmod 755 "$dest"

# ---- make install (host) ----
env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory install \
	DESTDIR="$dest" PREFIX=/usr >"$dest/make.out" 2>&1 ||
	die "make install failed: $(cat "$dest/make.out")"
for f in usr/bin/wafer:755 usr/lib/libwafer.so.0:755 usr/lib/libwafer.a:644 \
	usr/lib/libwfsim.a:644 usr/include/wafer.h:644 usr/lib/pkgconfig/wafer.pc:644 \
	lib/udev/rules.d/70-wafer.rules:644; do
	[ -f "$dest/${f%:*}" ] || die "make install did not create ${f%:*}"
	mode=$(stat -c %a "$dest/${f%:*}")
	[ "$mode" = "${f#*:}" ] || die "${f%:*} has mode $mode, not ${f#*:}"
done
[ "$(readlink "$dest/usr/lib/libwafer.so")" = libwafer.so.0 ] ||
	die "usr/lib/libwafer.so is not a link to libwafer.so.0"
grep -qx 'prefix=/usr' "$dest/usr/lib/pkgconfig/wafer.pc" || die "wafer.pc: prefix is not /usr"
cmp -s userlib/udev/70-wafer.rules "$dest/lib/udev/rules.d/70-wafer.rules" ||
	die "the installed rule differs from userlib/udev/70-wafer.rules"
echo "make install: $(cd "$dest" && find . -type f -o -type l | grep -vc make.out) files"

# ---- the guest: the installed rule and CLI ----
# One script, run as root and again as each user (every exec costs under
# TCG, so few processes).
cat >"$dest/guest.sh" <<'GUEST'
set -euo pipefail
role=$1 root=$2 models=$3
self=$0 wafer=$root/usr/bin/wafer
run_args=("$models/stories260K.bin" -z "$models/tok512.bin" -t 0 -n 24)
dbg=/sys/kernel/debug/accel/wafer.0
fail() { echo "FAILED: $role: $*"; exit 1; }
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --init-groups "$@"; }

case $role in
member)
	[[ " $(id -Gn) " == *" wafer "* ]] || fail "not in group wafer: $(id)"
	out=$("$wafer" info -d 1 2>&1) || fail "wafer info -d 1: $out"
	[[ "$out" == *"device:   accel1 "* ]] || fail "wafer info -d 1: $out"
	# The default backend picks the kernel when the node can be opened.
	got=$("$wafer" run "${run_args[@]}" 2>/tmp/member.err) ||
		fail "wafer run: $(cat /tmp/member.err)"
	[[ "$(</tmp/member.err)" == *"wafer: backend kernel (accel0"* ]] ||
		fail "wafer run did not use the kernel backend: $(cat /tmp/member.err)"
	echo "member-run: ${got//$'\n'/|}"
	# debugfs stays root-only; sysfs is readable, none of it writable.
	! { : <"$dbg/jobs"; } 2>/dev/null || fail "read $dbg/jobs"
	! { echo 1 >"$dbg/inject_warn"; } 2>/dev/null || fail "wrote $dbg/inject_warn"
	read -r stages </sys/class/accel/accel0/device/stages || fail "cannot read sysfs"
	tried=0 wrote=""
	for f in /sys/devices/platform/wafer.0/* /sys/devices/platform/wafer.0/accel/accel0/* \
		/sys/module/wafer/parameters/*; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		tried=$((tried + 1))
		! { : >"$f"; } 2>/dev/null || wrote="$wrote $f"
	done
	echo "sysfs: member read stages=$stages, could write none of $tried files"
	[ "$tried" -ge 10 ] || fail "only $tried sysfs files found"
	[ -z "$wrote" ] || fail "could write:$wrote"
	exit 0 ;;
outsider)
	[[ " $(id -Gn) " != *" wafer "* ]] || fail "in group wafer: $(id)"
	! { exec 3</dev/accel/accel0; } 2>/dev/null || fail "opened accel0 read-only"
	! { exec 3<>/dev/accel/accel1; } 2>/dev/null || fail "opened accel1"
	for cmd in "info" "info -d 1" "list" "run ${run_args[*]}" "bench --backend kernel"; do
		rc=0
		# shellcheck disable=SC2086
		out=$("$wafer" $cmd 2>&1) || rc=$?
		echo "outsider: wafer ${cmd%% /*}: rc=$rc: ${out%%$'\n'*}"
		[ "$rc" = 1 ] || fail "wafer $cmd exited $rc: $out"
		node=/dev/accel/accel0
		[ "$cmd" != "info -d 1" ] || node=/dev/accel/accel1
		[[ "$out" == *"cannot open $node: Permission denied (mode 0660, group wafer: add the user to group wafer"* ]] ||
			fail "wafer $cmd: $out"
	done
	exit 0 ;;
root) ;;
*) fail "unknown role" ;;
esac

# A group and two users, in copies of /etc/group and /etc/passwd (/etc is
# read-only here).
[ -z "$(getent group wafer member outsider 4710 4711 4712)" ] || fail "test groups exist"
[ -z "$(getent passwd member outsider 4711 4712)" ] || fail "test users exist"
etc=$(mktemp -d)
cp /etc/group /etc/passwd "$etc/"
printf 'wafer:x:4710:member\nmember:x:4711:\noutsider:x:4712:\n' >>"$etc/group"
printf '%s\n' 'member:x:4711:4711::/tmp:/bin/sh' 'outsider:x:4712:4712::/tmp:/bin/sh' \
	>>"$etc/passwd"
chmod 644 "$etc/group" "$etc/passwd"
mount --bind "$etc/group" /etc/group
mount --bind "$etc/passwd" /etc/passwd

# The devices, then udevd with the distribution's rules plus ours and a
# coldplug of their nodes, as at boot: a udevd started just before them
# in a busy TCG guest once left vgem's nodes unhandled, and once never
# handled some node within a minute.  vgem's DRM nodes are the control the
# rule must leave alone.
modprobe -d "$WAFER_MODULES_ROOT" vgem
insmod "$WAFER_MODULE" num_devices=2
mkdir -p /run/udev/rules.d
cp "$root/lib/udev/rules.d/70-wafer.rules" /run/udev/rules.d/
/lib/systemd/systemd-udevd --daemon 2>/dev/null
udevadm control --ping
trap 'udevadm control --exit || true' EXIT
devs=$(echo /dev/accel/accel* /dev/dri/card* /dev/dri/renderD*)
# The nodes udevd has not recorded (no database entry).
unhandled() {
	local d n
	for d in $devs; do
		n=$(stat -c '%t %T' "$d")
		[ -e "/run/udev/data/c$((16#${n% *})):$((16#${n#* }))" ] || printf '%s ' "$d"
	done
}
udevadm trigger --action=add --subsystem-match=accel --subsystem-match=drm
# Until udevd has run its rules on every node, not only until its queue
# is empty (settle can return before an event is queued).
# shellcheck disable=SC2086
udevadm wait --settle --initialized=yes --timeout=60 $devs ||
	fail "udev did not handle $(unhandled)within 60 s"
nodes=$(stat -c '%n %U:%G %a' /dev/accel/accel* /dev/dri/card* /dev/dri/renderD*)
echo "$nodes" | sed 's/^/node: /'
[ "$(grep -c '^/dev/accel/accel[01] root:wafer 660$' <<<"$nodes")" = 2 ] ||
	fail "the accel nodes are not root:wafer 660"
grep -q '^/dev/dri/' <<<"$nodes" || fail "vgem made no /dev/dri nodes"
! grep '^/dev/dri/.* root:root ' <<<"$nodes" || fail "udev did not handle vgem's nodes"
! grep '^/dev/dri/.*:wafer ' <<<"$nodes" || fail "the rule matched a vgem node"

as member bash "$self" member "$root" "$models"
as outsider bash "$self" outsider "$root" "$models"
"$wafer" info -d 0 | grep -q '^device: *accel0 ' || fail "wafer info -d 0"
echo "root: wafer info -d 0 works"

# debugfs: root-only at the top, and no wafer file open to others below it
# (DRM's own "name" aside).
[ "$(stat -c %a /sys/kernel/debug)" = 700 ] || fail "debugfs is not 0700"
[ -e "$dbg/jobs" ] || fail "no $dbg/jobs"
loose=$(find "$dbg" -type f -perm /077 ! -name name)
[ -z "$loose" ] || fail "debugfs files open to others: $loose"

# An admin who installs the rule after the module is loaded triggers it.
chown root:root /dev/accel/accel0
chmod 600 /dev/accel/accel0
udevadm trigger --action=add --subsystem-match=accel
udevadm settle
m=$(stat -c '%U:%G %a' /dev/accel/accel0)
[ "$m" = "root:wafer 660" ] || fail "after udevadm trigger accel0 is $m"
echo "trigger: accel0 back to $m"
rmmod vgem
echo "permissions: ok"
GUEST

out=$("$vm" --no-module -- bash "$dest/guest.sh" root "$dest" "$models" 2>&1) || {
	printf '%s\n' "$out"
	die "the guest checks failed"
}
printf '%s\n' "$out"
want=$("$dest/usr/bin/wafer" run "$models/stories260K.bin" -z "$models/tok512.bin" -t 0 -n 24 \
	--backend inproc 2>/dev/null)
[ -n "$want" ] || die "the inproc run printed nothing"
grep -Fqx "member-run: ${want//$'\n'/|}" <<<"$out" ||
	die "the member's kernel run differs from inproc: $want"
expect_contains "$out" '^node: /dev/accel/accel0 root:wafer 660$'
expect_contains "$out" '^outsider: wafer info: rc=1: wafer: cannot open /dev/accel/accel0: Permission denied'
expect_contains "$out" '^permissions: ok$'
