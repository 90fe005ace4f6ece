# A star micro-scenario for isolating differences (crosscheck/star_incast.py
# runs it beside ecnlab): n senders -> one switch -> one receiver, sender i
# sends one flow of `bytes` in service i mod nsvc, starting at 0.5 s +
# i * stagger on a connection warmed up at 0.1 s. TCP, DWRR and per-queue
# marking are set as in the MQ-ECN authors' spine_empirical_diffserv.tcl;
# every port (the hosts' NICs too) is a DWRR port, as there.
# Arguments: n bytes K stagger nsvc. Prints "fct ID SECONDS rexmit TIMEOUTS"
# per flow and the bottleneck port's drops.
set n [lindex $argv 0]
set bytes [lindex $argv 1]
set K [lindex $argv 2]
set stagger [lindex $argv 3]
set nsvc [lindex $argv 4]
set ns [new Simulator]
set pktSize 1460
Agent/TCP set windowInit_ 16
Agent/TCP set window_ 1256
Agent/TCP set ecn_ 1
Agent/TCP set old_ecn_ 1
Agent/TCP set packetSize_ $pktSize
Agent/TCP/FullTcp set segsize_ $pktSize
Agent/TCP/FullTcp set spa_thresh_ 0
Agent/TCP set slow_start_restart_ true
Agent/TCP set windowOption_ 0
Agent/TCP set tcpTick_ 0.000001
Agent/TCP set minrto_ 0.005
Agent/TCP set rtxcur_init_ 0.005
Agent/TCP set maxrto_ 64
Agent/TCP/FullTcp set nodelay_ true
Agent/TCP/FullTcp set segsperack_ 1
Agent/TCP/FullTcp set interval_ 0
Agent/TCP set dctcp_ true
Agent/TCP set dctcp_g_ 0.0625
Queue set limit_ 200
Queue/DWRR set queue_num_ 8
Queue/DWRR set mean_pktsize_ 1500
Queue/DWRR set port_thresh_ $K
Queue/DWRR set estimate_round_alpha_ 0.75
Queue/DWRR set estimate_round_idle_interval_bytes_ 1500
Queue/DWRR set link_capacity_ 10Gb
Queue/DWRR set deque_marking_ false
Queue/DWRR set debug_ false
Queue/DWRR set marking_scheme_ 0
set sw [$ns node]
set r [$ns node]
$ns duplex-link $r $sw 10Gb 0.0000202 DWRR
for {set i 0} {$i < $n} {incr i} {
  set s($i) [$ns node]
  $ns duplex-link $s($i) $sw 10Gb 0.0000202 DWRR
}
foreach L [list [$ns link $r $sw] [$ns link $sw $r]] {
  set q [$L set queue_]
  for {set qi 0} {$qi < 8} {incr qi} { $q set-quantum $qi 1500; $q set-thresh $qi $K }
}
for {set i 0} {$i < $n} {incr i} {
  foreach L [list [$ns link $s($i) $sw] [$ns link $sw $s($i)]] {
    set q [$L set queue_]
    for {set qi 0} {$qi < 8} {incr qi} { $q set-quantum $qi 1500; $q set-thresh $qi $K }
  }
}
Agent/TCP/FullTcp instproc done_data {} {
  global ns
  $self instvar start_t id_
  puts "fct $id_ [expr [$ns now] - $start_t] rexmit [$self set nrexmit_]"
}
for {set i 0} {$i < $n} {incr i} {
  set t($i) [new Agent/TCP/FullTcp/Sack]
  set rcv($i) [new Agent/TCP/FullTcp/Sack]
  $t($i) set fid_ $i; $rcv($i) set fid_ $i
  $t($i) set serviceid_ [expr $i % $nsvc]; $rcv($i) set serviceid_ [expr $i % $nsvc]
  $ns attach-agent $s($i) $t($i); $ns attach-agent $r $rcv($i)
  $rcv($i) listen
  $ns connect $t($i) $rcv($i)
  $t($i) set id_ $i
  # warm the connection up (handshake) as the script does, then the flow
  $ns at 0.1 "$t($i) advanceby 5"
  set st [expr 0.5 + $i * $stagger]
  $ns at $st "$t($i) set start_t $st; $t($i) set signal_on_empty_ TRUE; $t($i) advance-bytes $bytes"
}
set qmon [$ns monitor-queue $sw $r ""]
proc report {} { global qmon; puts "bottleneck pdrops [$qmon set pdrops_] parrivals [$qmon set parrivals_]"; exit 0 }
$ns at 5 "report"
$ns run
