# SPDX-License-Identifier: MIT
# bash completion of wafer: its commands, each command's flags (read from
# `wafer CMD --help`, so they follow the binary), the values of the flags
# that take a fixed set, and file names otherwise.

_wafer_flags()
{
	local cmd=$1 var=_wafer_flags_$1
	if [[ -z ${!var-} ]]; then
		printf -v "$var" '%s' "$("$2" "$cmd" --help 2>/dev/null |
			grep -oE '(^|[][ ,(|])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ ,(|]*//' | sort -u |
			tr '\n' ' ')"
	fi
	printf '%s' "${!var}"
}

_wafer()
{
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	cmd=${COMP_WORDS[1]-}
	if ((COMP_CWORD == 1)); then
		mapfile -t COMPREPLY < <(compgen -W 'list info run bench top plan serve convert node help --help --version' -- "$cur")
		return
	fi
	case $prev in
	--backend | -b) mapfile -t COMPREPLY < <(compgen -W 'kernel inproc auto' -- "$cur"); return ;;
	--quant | -q) mapfile -t COMPREPLY < <(compgen -W 'int8 int4' -- "$cur"); return ;;
	--submit) mapfile -t COMPREPLY < <(compgen -W 'ioctl uring' -- "$cur"); return ;;
	--stream-weights) mapfile -t COMPREPLY < <(compgen -W 'auto on off' -- "$cur"); return ;;
	--moe-gate) mapfile -t COMPREPLY < <(compgen -W 'softmax sigmoid unit' -- "$cur"); return ;;
	--chat-template) mapfile -t COMPREPLY < <(compgen -W 'story chatml llama2 zephyr' -- "$cur"); return ;;
	--profile) mapfile -t COMPREPLY < <(compgen -W 'wafer asic wse3' -- "$cur"); return ;;
	-m) [[ $cmd == run ]] && { mapfile -t COMPREPLY < <(compgen -W 'generate chat' -- "$cur"); return; } ;;
	esac
	if [[ $cmd == help ]]; then
		((COMP_CWORD == 2)) &&
			mapfile -t COMPREPLY < <(compgen -W 'list info run bench top plan serve convert node' -- "$cur")
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_wafer_flags "$cmd" "${COMP_WORDS[0]}")" -- "$cur")
		return
	fi
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

complete -o filenames -F _wafer wafer
