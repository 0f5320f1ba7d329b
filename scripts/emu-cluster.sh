#!/usr/bin/env bash
# emu-cluster.sh - an emulated cluster on one machine, for measuring Pista
# across ranks (issue 16): N network namespaces, each joined to a bridge by
# a veth pair whose both ends are shaped with tc (rate and delay, as a NIC
# and a switch would), and one MPI rank in each, talking TCP (shared memory
# between ranks is turned off). Needs root (CAP_NET_ADMIN) and OpenMPI.
#
#   scripts/emu-cluster.sh [--ranks N] [--rate 10gbit] [--delay 50us] -- PROGRAM ARGS...
#
# runs `mpirun` with rank i in namespace pista_ns<i> (10.77.0.<i+1>), e.g.
#   scripts/emu-cluster.sh --ranks 4 -- build/normal/pista bench net
#   scripts/emu-cluster.sh --ranks 2 -- build/normal/pista --data DIR -f q.sql
# The namespaces are removed at the end (also on Ctrl-C); `--keep` leaves
# them for another run and `--down` only removes them.
set -euo pipefail

ranks=2 rate=10gbit delay=50us keep=0 down=0
shaping=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --down) down=1; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "emu-cluster: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
case "$ranks" in ''|*[!0-9]*) echo "emu-cluster: --ranks needs a number" >&2; exit 2 ;; esac
[ "$ranks" -ge 1 ] && [ "$ranks" -le 64 ] || { echo "emu-cluster: --ranks must be 1..64" >&2; exit 2; }

BR=pista_br0
teardown() {
  for ns in $(ip netns list 2>/dev/null | awk '/^pista_ns/ {print $1}'); do ip netns del "$ns" 2>/dev/null || true; done
  ip link del "$BR" 2>/dev/null || true
}
if [ $down -eq 1 ]; then teardown; exit 0; fi
[ $# -gt 0 ] || { echo "emu-cluster: no program to run (-- PROGRAM ARGS...)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "emu-cluster: mpirun not found (scripts/deps.sh)" >&2; exit 1; }
command -v tc >/dev/null || { echo "emu-cluster: tc not found (iproute2)" >&2; exit 1; }

teardown
[ $keep -eq 1 ] || trap teardown EXIT
ip link add "$BR" type bridge
ip addr add 10.77.0.254/24 dev "$BR"   # mpirun's side: ranks reach its PMIx server here
ip link set "$BR" up
for ((i = 0; i < ranks; i++)); do
  ns=pista_ns$i
  ip netns add $ns
  ip link add pv$i type veth peer name eth0 netns $ns
  ip link set pv$i master "$BR"
  ip link set pv$i up
  ip -n $ns addr add 10.77.0.$((i + 1))/24 dev eth0
  ip -n $ns link set eth0 up
  ip -n $ns link set lo up
  # The rank's sending side, and the switch port towards it (its receiving
  # side): netem (rate and delay) where the kernel has it, else tbf (rate
  # only: the delay is then not emulated, and said so).
  for side in "ip netns exec $ns tc qdisc add dev eth0" "tc qdisc add dev pv$i"; do
    if ! $side root netem rate "$rate" delay "$delay" limit 100000 2>/dev/null; then
      $side root tbf rate "$rate" burst 1mb latency 20ms
      shaping="$rate by tbf (this kernel has no netem: no delay)"
    fi
  done
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=10.77.0.0/24 OMPI_MCA_oob_tcp_if_include=10.77.0.0/24
export PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=10.77.0.0/24
apps=()
for ((i = 0; i < ranks; i++)); do
  [ $i -gt 0 ] && apps+=(:)
  apps+=(-np 1 ip netns exec pista_ns$i "$@")
done
echo "emu-cluster: $ranks ranks, ${shaping:-$rate and $delay} each way per rank, TCP between namespaces" >&2
mpirun "${apps[@]}"
