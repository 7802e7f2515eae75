#!/bin/bash
# usage: measure_stall.sh BUILD_DIR
# 5 injections of the stand-in agent into the heartbeat target: inject_tool's longest
# stop and the target's largest heartbeat gap.
B=${1:?usage: measure_stall.sh BUILD_DIR}
for i in 1 2 3 4 5; do
  mkfifo /tmp/hb_in.$i
  $B/bin/inject_heartbeat </tmp/hb_in.$i >/tmp/hb_out.$i 2>/tmp/hb_err.$i & p=$!
  exec 4>/tmp/hb_in.$i
  until grep -q ready /tmp/hb_out.$i; do sleep 0.05; done
  sleep 0.2
  $B/bin/inject_tool $p $B/lib/libinject_test_agent.so
  sleep 0.2
  exec 4>&-; wait $p; cat /tmp/hb_err.$i
  rm -f /tmp/hb_in.$i /tmp/hb_out.$i /tmp/hb_err.$i
done
