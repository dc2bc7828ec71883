# `wafer serve --backend kernel`: 64 clients at once (greedy of mixed
# prompt lengths, 1 to ~55 tokens, and max_tokens, chat and completions, one
# seeded sampled) on 16 slots with the rest queued, against the kernel
# driver in the guest, get byte for byte the answers the in-process backend
# gives each request alone on the host (ids and timestamps aside); no step
# submits more jobs than slots; SIGTERM then stops the server with exit 0.
# Then, shorter, the same server over a pipeline of 2 kernel devices
# (num_devices=2, -d 0-1: the model's layers split, activations crossing
# by PRIME): it names each device's layers at start, and 8 greedy clients
# at once (prompts of 1 to ~40 tokens, several prefill chunks) get byte for
# byte the in-process answers on one device alone; both members ran jobs.
# Both servers run as an unprivileged user (nobody, the device nodes given
# to its group, as the systemd unit's user is given them), and /metrics has
# the kernel devices' per-stage busy time that the web page draws, for the
# single device and for each pipeline member: the driver's fdinfo of the
# server's file, not debugfs (root only).
# Stock-only: the driver paths it uses (MODEL_LOAD, SUBMIT, WAIT) are the
# debug tier's through model_e2e and conformance.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
# Prompt chunks of 8 positions and job_timeout_ms=20000: under TCG a job's
# time is the emulated device's forward pass, which a loaded host stretches
# (the default 5 s reset the device in a load run of 16+ clients); serve
# puts at most --slots jobs on the device a step (checked below from
# /metrics), so this case checks batching, not the emulation's speed.
# For the same reason a header timeout of 120 s: 64 connections accepted
# at once by a starved guest must not be cut before their threads read them.
slots=16 clients=64 pipe_clients=8
serve_args="$models/stories260K.bin -z $models/tok512.bin --slots $slots --queue 64 --prefill-chunk 8 --header-timeout 120"

prompts=("" "Once" "Once upon a time" "The cat sat on the mat and"
	"Lily and Ben went to the park. They saw a big dog. The dog was"
	"One day, a little girl named Sue found a shiny red ball in the garden. She wanted to play with it, but her mom said it was time for lunch.")
bodies=() paths=()
for i in $(seq 0 $((clients - 1))); do
	p=${prompts[i % ${#prompts[@]}]}
	m=$((4 + (i * 7) % 21))
	if [ "$i" = $((clients - 1)) ]; then
		bodies+=("{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":24,\"temperature\":0.9,\"top_p\":0.95,\"seed\":77}")
		paths+=(/v1/completions)
	elif [ $((i % 3)) = 1 ]; then
		bodies+=("{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"$p\"}],\"max_tokens\":$m,\"temperature\":0}")
		paths+=(/v1/chat/completions)
	else
		bodies+=("{\"model\":\"stories260K\",\"prompt\":\"$p\",\"max_tokens\":$m,\"temperature\":0}")
		paths+=(/v1/completions)
	fi
done

# The id and created fields differ between runs; the rest must not.
norm() { sed -e 's/"id":"[^"]*",//' -e 's/"created":[0-9]*,//'; }

script="set -e
PATH=$PATH:/usr/sbin:/sbin; ip link set lo up
chgrp 65534 /dev/accel/accel0 /dev/accel/accel1; chmod 660 /dev/accel/accel0 /dev/accel/accel1
as_nobody='setpriv --reuid=65534 --regid=65534 --clear-groups'
\$as_nobody $wafer serve $serve_args --backend kernel --port 8000 >\"\$WAFER_RESULTS/serve.out\" 2>\"\$WAFER_RESULTS/serve.err\" &
srv=\$!
up=0
for t in \$(seq 150); do curl -sf http://127.0.0.1:8000/health >/dev/null && { up=1; break; }; sleep 0.2; done
[ \$up = 1 ] || { cat \"\$WAFER_RESULTS/serve.err\"; exit 1; }
echo \"=== uid\"; awk '/^Uid:/ { print \$2 }' /proc/\$srv/status
pids=''"
for i in "${!bodies[@]}"; do
	script+="
curl -s --max-time 600 -d $(printf '%q' "${bodies[i]}") http://127.0.0.1:8000${paths[i]} >\"\$WAFER_RESULTS/r$i.json\" & pids=\"\$pids \$!\""
done
script+="
for p in \$pids; do wait \$p; done
curl -s http://127.0.0.1:8000/metrics | grep -E '^wafer_serve_(completion_tokens_total|device_jobs_total|steps_total |stage_busy_seconds_total)' >\"\$WAFER_RESULTS/metrics\"
kill -TERM \$srv
rc=0; wait \$srv || rc=\$?
echo \"=== rc\"; echo \$rc
\$as_nobody $wafer serve $serve_args --backend kernel -d 0-1 --port 8001 >\"\$WAFER_RESULTS/pipe.out\" 2>\"\$WAFER_RESULTS/pipe.err\" &
srv=\$!
up=0
for t in \$(seq 150); do curl -sf http://127.0.0.1:8001/health >/dev/null && { up=1; break; }; sleep 0.2; done
[ \$up = 1 ] || { cat \"\$WAFER_RESULTS/pipe.err\"; exit 1; }
pids=''"
for i in $(seq 0 $((pipe_clients - 1))); do
	script+="
curl -s --max-time 600 -d $(printf '%q' "${bodies[i]}") http://127.0.0.1:8001${paths[i]} >\"\$WAFER_RESULTS/p$i.json\" & pids=\"\$pids \$!\""
done
script+="
for p in \$pids; do wait \$p; done
curl -s http://127.0.0.1:8001/metrics | grep -E '^wafer_serve_(device_jobs_total|steps_total|member_jobs_total|stage_busy_seconds_total)' >\"\$WAFER_RESULTS/pipe-metrics\"
kill -TERM \$srv
rc=0; wait \$srv || rc=\$?
echo \"=== pipe-rc\"; echo \$rc
for i in \$(seq 0 $((pipe_clients - 1))); do echo \"=== p\$i\"; cat \"\$WAFER_RESULTS/p\$i.json\"; echo; done
echo '=== pipe-metrics'; cat \"\$WAFER_RESULTS/pipe-metrics\"
echo '=== pipe-serve'; cat \"\$WAFER_RESULTS/pipe.out\" \"\$WAFER_RESULTS/pipe.err\"
for i in \$(seq 0 $((${#bodies[@]} - 1))); do echo \"=== r\$i\"; cat \"\$WAFER_RESULTS/r\$i.json\"; echo; done
echo '=== metrics'; cat \"\$WAFER_RESULTS/metrics\"
echo '=== serve'; cat \"\$WAFER_RESULTS/serve.out\" \"\$WAFER_RESULTS/serve.err\""
vm_out=$("$vm" --params 'job_timeout_ms=20000 num_devices=2' -- sh -c "$script")

section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

printf '%s\n' "$(section serve)"
expect_contains "$(section serve)" 'kernel backend'
[ "$(section uid)" = 65534 ] || die "wafer serve ran as uid '$(section uid)', not nobody (65534)"
[ "$(section rc)" = 0 ] || die "wafer serve exited $(section rc) after SIGTERM"
printf '%s\n' "$(section metrics)"
jobs=$(section metrics | awk '$1 == "wafer_serve_device_jobs_total" { print $2 }')
steps=$(section metrics | awk '$1 == "wafer_serve_steps_total" { print $2 }')
[ -n "$jobs" ] && [ -n "$steps" ] && [ "$steps" -gt 0 ] || die "no jobs or steps in /metrics"
[ "$jobs" -le $((steps * slots)) ] ||
	die "$jobs device jobs in $steps steps: more than $slots (the slots) a step"
echo "$jobs device jobs in $steps steps (at most $slots a step)"
# Per-stage occupancy for the web page, from the fdinfo of the (unprivileged) server's file.
busy_stages() {
	section "$1" | awk -v k="$2" 'index($1, "wafer_serve_stage_busy_seconds_total{member=\"" k "\",") == 1 && $2 > 0 { n++ } END { print n + 0 }'
}
[ "$(busy_stages metrics 0)" -gt 0 ] || die "no stage of the kernel device busy in /metrics"

# The pipeline: its layer map at start, its exit, both members at work.
printf '%s\n' "$(section pipe-serve)"
expect_contains "$(section pipe-serve)" 'layers over 2 devices'
expect_contains "$(section pipe-serve)" 'accel0 +layers +0-[0-9]+ +\+embed'
expect_contains "$(section pipe-serve)" 'accel1 +layers +[0-9]+-4 .*\+head'
[ "$(section pipe-rc)" = 0 ] || die "wafer serve -d 0-1 exited $(section pipe-rc) after SIGTERM"
printf '%s\n' "$(section pipe-metrics)"
pjobs=$(section pipe-metrics | awk '$1 == "wafer_serve_device_jobs_total" { print $2 }')
psteps=$(section pipe-metrics | awk '$1 == "wafer_serve_steps_total" { print $2 }')
[ -n "$pjobs" ] && [ -n "$psteps" ] && [ "$pjobs" -gt 0 ] || die "pipeline: no jobs in /metrics"
[ "$pjobs" -le $((psteps * slots)) ] || die "pipeline: $pjobs jobs in $psteps steps"
for k in 0 1; do
	mj=$(section pipe-metrics | awk -v k="$k" 'index($1, "wafer_serve_member_jobs_total{member=\"" k "\",device=\"accel" k "\"}") == 1 { print $2 }')
	[ -n "$mj" ] && [ "$mj" -ge "$pjobs" ] ||
		die "pipeline: member $k (accel$k) completed ${mj:-no} jobs, the server ran $pjobs"
	[ "$(busy_stages pipe-metrics "$k")" -gt 0 ] ||
		die "pipeline: no stage of member $k (accel$k) busy in /metrics"
done

# The same requests, one at a time, in process on the host.
out=$(mktemp)
trap 'rm -f "$out"; [ -n "${hpid:-}" ] && kill "$hpid" 2>/dev/null; true' EXIT
"$wafer" serve $serve_args --backend inproc --port 0 >"$out" 2>/dev/null &
hpid=$!
for _ in $(seq 100); do grep -q 'listening on' "$out" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:.*:\([0-9]*\)$/\1/p' "$out")
[ -n "$port" ] || die "the host's inproc server did not start"
for i in "${!bodies[@]}"; do
	want=$(curl -s -d "${bodies[i]}" "http://127.0.0.1:$port${paths[i]}" | norm)
	got=$(section "r$i" | norm)
	expect_contains "$want" '"finish_reason":"(stop|length)"'
	if [ "$got" != "$want" ]; then
		printf 'want %s\n got %s\n' "$want" "$got"
		die "request $i: kernel backend, batched, differs from inproc alone"
	fi
	[ "$i" -lt $pipe_clients ] || continue
	got=$(section "p$i" | norm)
	if [ "$got" != "$want" ]; then
		printf 'want %s\n got %s\n' "$want" "$got"
		die "request $i: kernel pipeline of 2 devices, batched, differs from inproc alone"
	fi
done
kill -TERM "$hpid"
wait "$hpid" || die "the host's server exited $?"
hpid=
echo "$clients concurrent requests on $slots slots through the kernel driver == inproc alone, byte for byte"
echo "$pipe_clients concurrent requests through a kernel pipeline of 2 devices ($pjobs jobs in $psteps steps) == inproc alone, byte for byte"
