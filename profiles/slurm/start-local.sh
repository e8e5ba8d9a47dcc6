#!/usr/bin/env bash
# Start a single-node SLURM (Debian/Ubuntu slurm-wlm + munge) on this machine, as root: `make slurm-local`, to try
# the cluster path on a workstation, and the real-SLURM test (tests/workflow/test_slurm.py).
# Idempotent: exits 0 at once if the node is already up. Prints why and exits 1 if it cannot.
# Lessons kept here: with accounting disabled, Snakemake's slurm plugin needs `slurm-status-command: squeue`;
# proctrack/linuxproc and task/none need no cgroups.
set -euo pipefail
if sinfo -h -o %T 2>/dev/null | grep -qE "^(idle|mixed|allocated)"; then exit 0; fi
[ "$(id -u)" = 0 ] || { echo "start-local: needs root"; exit 1; }
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge) >/dev/null 2>&1 \
        || { echo "start-local: cannot install slurm-wlm and munge with apt-get"; exit 1; }
fi
mkdir -p /etc/munge /run/munge /var/log/munge /var/lib/munge /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
chmod 700 /etc/munge; chmod 400 /etc/munge/munge.key
pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged --force
host=$(hostname -s)
memory_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10 ))
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=virtuebench-test
SlurmctldHost=${host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=${host} NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=${memory_mb} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld
pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
for _ in $(seq 1 60); do
    if sinfo -h -o %T 2>/dev/null | grep -qE "^(idle|mixed|allocated)"; then exit 0; fi
    scontrol update nodename="${host}" state=resume >/dev/null 2>&1 || true
    sleep 1
done
echo "start-local: the node did not become idle: $(sinfo -h -o '%T %E' 2>&1 | head -1); see /var/log/slurm/"
exit 1
