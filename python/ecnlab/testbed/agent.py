"""A testbed host's traffic, run inside its namespace by ``ecnlab testbed``
(``python agent.py SPEC.json``): the kernel does the TCP, this opens the
connections, moves the bytes and keeps the times.

- Every host listens for flows (TCP) and probes (UDP). A flow's first 12
  bytes say its id and size; the receiver reads the payload and, for a
  sized flow, answers one byte once it has it all, which the sender takes
  as the flow's end (its FCT: connect() to that byte). Goodput comes from
  the kernel's count of bytes received in order, read every goodput
  interval, not from when the application got round to reading them.
- Senders set ``IP_TOS`` to the flow's service << 2 (DSCP = service), the
  switch's classifier reads it back; a long-lived flow sends until its
  stop time, a sized one its bytes.
- Pings are ICMP echo requests with the service's DSCP, answered by the
  peer's kernel (which copies the request's TOS into its reply, so the
  echo comes back through the same service's queue), as MQ-ECN Fig. 6(b)'s
  ping. The RTT is the kernel's: the request's transmit timestamp (taken
  as it enters the device layer, SO_TIMESTAMPING's TX_SCHED) to the
  reply's receive timestamp (taken as the veth hands it in), so no
  application's wake-up is in it.
- Incast: each sender connects to the receiver at the group's start (its
  header's size is ``INCAST``) and waits for requests. Once every sender's
  connection is there, the receiver runs the rounds: it sends each sender
  a 4-byte request (the round's number), ``request_gap`` apart, each
  sender answers with ``block`` bytes after its drawn jitter, and the
  round ends when the receiver has read every block; the next one starts
  then. After the last round (or at the run's end) the receiver closes.

Stdlib only and no package imports: it starts in a few tens of ms.
Times are ``time.monotonic()``, which all namespaces share, relative to
the run's ``t0``: the agent prints ``ready`` once it listens and reads
``t0`` from its standard input.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import selectors
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, cast

FLOW_PORT = 5001
HEADER = struct.Struct("!Iq")
ICMP = struct.Struct("!BBHHH")
"""An ICMP echo header: type, code, checksum, identifier, sequence."""
ICMP_ECHO, ICMP_ECHOREPLY = 8, 0
IP_ICMP_HEADERS = 28
REQUEST = struct.Struct("!I")
INCAST = -2
"""The size a flow's header gives for an incast connection."""
CHUNK = 1 << 18
# Socket buffers far above any window the runs reach (a few hundred KB at
# most), so that neither the sending nor the receiving application, which
# the scheduler may leave waiting for milliseconds on a loaded machine,
# ever limits a flow: the kernel keeps sending from and receiving into them.
SOCKET_BUFFER = 8 << 20
TCPI_OPT_ECN = 8
# struct tcp_info (linux/tcp.h): tcpi_options is byte 5, tcpi_total_retrans
# the u32 at offset 100, tcpi_total_rto (retransmission timeouts, Linux
# 6.7 and later) the u16 at offset 240.
TCPI_TOTAL_RETRANS = 100
TCPI_TOTAL_RTO = 240
TCPI_LEN = 242
# linux/net_tstamp.h and linux/errqueue.h: kernel timestamps of a
# socket's packets, software ones only (a veth has no clock of its own).
SO_TIMESTAMPING = 37
SOF_TIMESTAMPING_RX_SOFTWARE = 1 << 3
SOF_TIMESTAMPING_SOFTWARE = 1 << 4
SOF_TIMESTAMPING_OPT_ID = 1 << 7
SOF_TIMESTAMPING_TX_SCHED = 1 << 8
SOF_TIMESTAMPING_OPT_TSONLY = 1 << 11
IP_RECVERR = 11
SO_EE_ORIGIN_TIMESTAMPING = 4
EXTENDED_ERR = struct.Struct("IBBBBII")
"""struct sock_extended_err: errno, origin, type, code, pad, info, data
(the OPT_ID counter: which send the timestamp belongs to)."""
SPIN = 300e-6
"""Waits shorter than this are spun, not slept: a sleeping thread here
wakes tens of µs late (more on a loaded machine), as much as a whole
request gap or response jitter."""


def pause_until(deadline: float) -> None:
    """Return at ``time.monotonic()`` = ``deadline``: sleep while it is far,
    then spin the rest."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        if left > SPIN:
            time.sleep(left - SPIN)


class Agent:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        # The run's start, which the orchestrator sends once every host's
        # agent listens (see `run`), and its end.
        self.t0 = 0.0
        self.end = 0.0
        self.bin: float = spec["goodput_interval"]
        self.lock = threading.Lock()
        self.received: dict[int, dict[str, Any]] = {}
        self.sent: dict[int, dict[str, Any]] = {}
        self.rtts: list[list[Any]] = []
        self.errors: list[str] = []
        self.receivers: list[threading.Thread] = []
        self.sampled: list[tuple[socket.socket, dict[str, Any]]] = []
        # Incast groups this host receives: their connections as they
        # arrive (by flow id), and the rounds they complete.
        self.groups: dict[int, dict[str, Any]] = {}
        self.group_of: dict[int, int] = {}
        for g in spec.get("incast_recv", []):
            self.groups[g["group"]] = {"conns": {}, "rounds": []}
            self.group_of.update({fid: g["group"] for fid in g["ids"]})
        self.arrived = threading.Condition(self.lock)

    def now(self) -> float:
        return time.monotonic() - self.t0

    # ------------------------------------------------------------- receiving

    def serve_flows(self, listener: socket.socket) -> None:
        listener.settimeout(0.2)
        while time.monotonic() < self.end:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            t = threading.Thread(target=self.receive, args=(conn,), daemon=True)
            t.start()
            self.receivers.append(t)

    def receive(self, conn: socket.socket) -> None:
        head = b""
        while len(head) < HEADER.size:
            part = conn.recv(HEADER.size - len(head))
            if not part:
                return
            head += part
        fid, size = HEADER.unpack(head)
        record: dict[str, Any] = {"bytes": 0, "samples": []}
        with self.lock:
            self.received[fid] = record
            self.sampled.append((conn, record))
            if size == INCAST:
                # Its group's thread runs the rounds on it from now on.
                self.groups[self.group_of[fid]]["conns"][fid] = (conn, record)
                self.arrived.notify_all()
                return
        conn.settimeout(0.2)
        buf = bytearray(CHUNK)
        while True:
            try:
                n = conn.recv_into(buf)
            except TimeoutError:
                if time.monotonic() > self.end:
                    break
                continue
            except OSError:
                break
            if n == 0 or time.monotonic() > self.end:
                # What arrives after the run's end is not counted.
                break
            record["bytes"] += n
            if size >= 0 and record["bytes"] >= size:
                # The flow's end at the receiver (run.fct_end = "receiver");
                # its sender takes the answer as the end on its side.
                record["finish"] = self.now()
                conn.sendall(b"!")
                break
        self.sample_one(conn, record)
        with self.lock:
            self.sampled.remove((conn, record))
        conn.close()

    # -------------------------------------------------------------- goodput

    def sample_one(self, conn: socket.socket, record: dict[str, Any]) -> None:
        """(time, payload bytes the kernel has received in order): the
        kernel's count (tcpi_bytes_received, the u64 at offset 128 of
        struct tcp_info) is exact at the moment it is read, however late
        the application reads the data itself."""
        try:
            info = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 136)
        except OSError:
            return
        got = struct.unpack_from("Q", info, 128)[0]
        record["samples"].append((self.now(), max(0, got - HEADER.size)))

    def sample_goodput(self) -> None:
        while True:
            now = time.monotonic()
            with self.lock:
                live = list(self.sampled)
            for conn, record in live:
                self.sample_one(conn, record)
            if now > self.end:
                return
            # No finer than 1 ms: more often would only cost the host CPU.
            time.sleep(max(0.0, max(self.bin, 1e-3) - (time.monotonic() - now)))

    def run_incast(self, group: dict[str, Any]) -> None:
        """The receiver's side of an incast group: the rounds, once every
        sender's connection has arrived."""
        state = self.groups[group["group"]]
        ids, block = group["ids"], group["block"]
        with self.lock:
            while len(state["conns"]) < len(ids) and time.monotonic() < self.end:
                self.arrived.wait(timeout=0.05)
            conns = [state["conns"][fid] for fid in ids if fid in state["conns"]]
        if len(conns) < len(ids):
            with self.lock:
                self.errors.append(
                    f"incast group {group['group']}: {len(conns)} of {len(ids)} senders connected"
                )
        else:
            for conn, _ in conns:
                # Requests and ACKs in the group's queue, as the simulator's.
                conn.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, group["service"] << 2)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn.settimeout(None)
            try:
                self._rounds(group, conns, block, state["rounds"])
            except OSError as exc:
                with self.lock:
                    self.errors.append(f"incast group {group['group']}: {exc}")
        for conn, record in conns:
            self.sample_one(conn, record)
            with self.lock:
                self.sampled.remove((conn, record))
            conn.close()

    def _rounds(
        self,
        group: dict[str, Any],
        conns: list[tuple[socket.socket, dict[str, Any]]],
        block: int,
        rounds: list[list[float]],
    ) -> None:
        """Run the group's rounds, appending (round, start, finish) for
        each one that completes before the run's end."""
        buf = bytearray(CHUNK)
        records = dict(conns)
        with selectors.DefaultSelector() as sel:
            for r in range(1, group["rounds"] + 1):
                start = time.monotonic()
                for k, (conn, _) in enumerate(conns):
                    pause_until(start + k * group["request_gap"])
                    conn.sendall(REQUEST.pack(r))
                left = {conn: block for conn, _ in conns}
                for conn in left:
                    sel.register(conn, selectors.EVENT_READ)
                while left and time.monotonic() < self.end:
                    for key, _ in sel.select(timeout=0.05):
                        conn = cast(socket.socket, key.fileobj)
                        n = conn.recv_into(buf, min(left[conn], CHUNK))
                        if n == 0:
                            raise ConnectionError(f"closed by its sender in round {r}")
                        records[conn]["bytes"] += n
                        left[conn] -= n
                        if left[conn] == 0:
                            del left[conn]
                            sel.unregister(conn)
                if left:
                    return  # the run ended inside this round
                rounds.append([r, start - self.t0, time.monotonic() - self.t0])

    # --------------------------------------------------------------- sending

    def wait_until(self, t: float) -> None:
        pause_until(self.t0 + t)

    def send_flow(self, flow: dict[str, Any]) -> None:
        fid, size = flow["id"], flow["size"]
        record: dict[str, Any] = {
            "start": None,
            "finish": None,
            "retransmits": 0,
            "timeouts": 0,
            "ecn": False,
        }
        sock = self._open(flow, record)
        with self._sending(f"flow {fid}", sock, record):
            self._connect(sock, flow, HEADER.pack(fid, size))
            sock.settimeout(0.05)
            payload = memoryview(bytearray(CHUNK))
            left = size if size >= 0 else None
            stop = self.t0 + flow["stop"]
            while time.monotonic() < stop and (left is None or left > 0):
                chunk = payload if left is None else payload[: min(left, CHUNK)]
                try:
                    n = sock.send(chunk)
                except TimeoutError:
                    continue
                if left is not None:
                    left -= n
            if left == 0:
                sock.settimeout(max(0.05, self.end - time.monotonic()))
                if sock.recv(1) == b"!":
                    record["finish"] = self.now()

    def send_serial(self, chain: list[dict[str, Any]]) -> None:
        """Serial flows: each opens its pause after the one before it has
        completed (its receiver's "all here" byte: every byte received,
        so acknowledged); after one that does not complete, none opens."""
        for k, flow in enumerate(chain):
            if k > 0:
                done = self.sent[chain[k - 1]["id"]].get("finish")
                if done is None:
                    return
                flow = {**flow, "start": done + flow["pause"]}
                if flow["start"] >= self.spec["duration"]:
                    return
            self.send_flow(flow)

    def send_incast(self, flow: dict[str, Any]) -> None:
        """A sender of an incast group: connect at the group's start, then
        answer each request with a block, after this round's jitter."""
        fid = flow["id"]
        record: dict[str, Any] = {"start": None, "retransmits": 0, "timeouts": 0, "ecn": False}
        block = bytes(flow["block"])
        sock = self._open(flow, record)
        # A block's last, short segment leaves at once, not after an ACK
        # (Nagle), as in the simulator.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._sending(f"incast flow {fid}", sock, record):
            self._connect(sock, flow, HEADER.pack(fid, INCAST))
            sock.settimeout(0.2)
            while True:
                request = self._read_request(sock)
                if request is None:
                    break  # the receiver closed: its last round is done
                jitter = flow["jitter"]
                if jitter:
                    pause_until(time.monotonic() + jitter[request - 1])
                sock.sendall(block)

    def _open(self, flow: dict[str, Any], record: dict[str, Any]) -> socket.socket:
        """A sender's socket at its flow's start, with the flow's DSCP and
        the agents' send buffer; `record` is registered under the flow's id
        and stamped with the start."""
        with self.lock:
            self.sent[flow["id"]] = record
        self.wait_until(flow["start"])
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, flow["service"] << 2)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
        record["start"] = self.now()
        return sock

    def _connect(self, sock: socket.socket, flow: dict[str, Any], header: bytes) -> None:
        sock.settimeout(max(0.1, self.end - time.monotonic()))
        sock.connect((self.spec["ips"][flow["dst"]], FLOW_PORT))
        sock.sendall(header)

    @contextlib.contextmanager
    def _sending(self, what: str, sock: socket.socket, record: dict[str, Any]) -> Iterator[None]:
        """A sender's body: a socket error before the run's end is recorded
        (at the end the receiver may close first: not an error); the
        kernel's counters go to `record` and the socket is closed."""
        try:
            yield
        except (TimeoutError, OSError) as exc:
            if time.monotonic() < self.end:
                with self.lock:
                    self.errors.append(f"{what}: {exc}")
        finally:
            self._tcp_info(sock, record)
            sock.close()

    def _read_request(self, sock: socket.socket) -> int | None:
        """The next request's round number; None once the receiver has
        closed (or the run is over)."""
        got = b""
        while len(got) < REQUEST.size:
            try:
                part = sock.recv(REQUEST.size - len(got))
            except TimeoutError:
                if time.monotonic() > self.end + 1.0:
                    return None
                continue
            if not part:
                return None
            got += part
        return int(REQUEST.unpack(got)[0])

    @staticmethod
    def _tcp_info(sock: socket.socket, record: dict[str, Any]) -> None:
        try:
            info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCPI_LEN)
        except OSError:
            return
        record["ecn"] = bool(info[5] & TCPI_OPT_ECN)
        record["retransmits"] = struct.unpack_from("I", info, TCPI_TOTAL_RETRANS)[0]
        # Older kernels' tcp_info ends before tcpi_total_rto: no count then.
        if len(info) >= TCPI_TOTAL_RTO + 2:
            record["timeouts"] = struct.unpack_from("H", info, TCPI_TOTAL_RTO)[0]

    def ping(self, probe: dict[str, Any]) -> None:
        """ICMP echoes every interval; the RTT of each from the kernel's
        timestamps of the request leaving and the reply arriving (both
        CLOCK_REALTIME), so a late wake-up of this thread on a loaded
        machine changes when it reads them, not what they say."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, probe["service"] << 2)
        flags = (
            SOF_TIMESTAMPING_TX_SCHED
            | SOF_TIMESTAMPING_RX_SOFTWARE
            | SOF_TIMESTAMPING_SOFTWARE
            | SOF_TIMESTAMPING_OPT_ID
            | SOF_TIMESTAMPING_OPT_TSONLY
        )
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, flags)
        # Replies and transmit stamps wait here while the reader is not
        # scheduled: room for seconds of them on a loaded machine.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
        sock.setblocking(False)
        # A raw socket sees every ICMP packet to this host: this probe's
        # replies are the ones with its identifier.
        ident = (self.spec["host"] << 8 | probe["index"]) & 0xFFFF
        dst = (self.spec["ips"][probe["dst"]], 0)
        pad = bytes(max(0, probe["size"] - IP_ICMP_HEADERS))
        # Keyed by the send's number k, which is also the kernel's count
        # of this socket's timestamped sends (OPT_ID): a transmit stamp
        # names its k, a reply its 16-bit sequence, the latest k sent
        # with it (a reply comes back long before the sequence wraps).
        latest: dict[int, int] = {}
        left: dict[int, float] = {}
        back: dict[int, float] = {}
        # The run's times are monotonic; the kernel's stamps are realtime.
        offset = time.time() - time.monotonic()

        def collect() -> None:
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            while time.monotonic() < self.end + 0.3:
                if not poller.poll(50):
                    continue
                for n, stamp in _drain_errqueue(sock):
                    left[n] = stamp
                for seq, stamp in _drain_replies(sock, ident):
                    if seq in latest:
                        back[latest[seq]] = stamp

        reader = threading.Thread(target=collect, daemon=True)
        reader.start()
        # This thread wakes once a slot: as a real-time thread (the lowest
        # priority, below the switch's) it wakes on time on a loaded
        # machine, where an ordinary one missed most 1 ms slots at a load
        # of 5-6. Its stamps are the kernel's either way; this is for
        # their number. Refused (not root): it stays ordinary.
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        k = 0
        next_at = self.t0 + probe["start"]
        while next_at < self.end:
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            seq = k & 0xFFFF
            head = ICMP.pack(ICMP_ECHO, 0, 0, ident, seq) + pad
            packet = head[:2] + struct.pack("!H", _checksum(head)) + head[4:]
            latest[seq] = k
            try:
                sock.sendto(packet, dst)
                k += 1
            except OSError as exc:
                with self.lock:
                    self.errors.append(f"ping {probe['index']}: {exc}")
            # A slot this thread woke too late for is skipped, not made up
            # with a burst: echoes sent back to back would queue behind
            # each other instead of behind the data the ping is to see.
            next_at += probe["interval"]
            late = time.monotonic() - next_at
            if late > 0:
                next_at += math.ceil(late / probe["interval"]) * probe["interval"]
        reader.join()
        sock.close()
        with self.lock:
            for n in range(k):
                if n in left and n in back:
                    self.rtts.append(
                        [
                            left[n] - offset - self.t0,
                            probe["src"],
                            probe["dst"],
                            probe["service"],
                            back[n] - left[n],
                        ]
                    )

    # ------------------------------------------------------------------ main

    def run(self) -> dict[str, Any]:
        me = self.spec["host"]
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Set before listen(): accepted sockets inherit it, and the window
        # scale is chosen from it at the handshake.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
        listener.bind((self.spec["ips"][me], FLOW_PORT))
        listener.listen(128)
        threads = [
            threading.Thread(target=self.serve_flows, args=(listener,), daemon=True),
            threading.Thread(target=self.sample_goodput, daemon=True),
        ]
        chains: dict[int, list[dict[str, Any]]] = {}
        for f in self.spec["flows"]:
            if "chain" in f:
                chains.setdefault(f["chain"], []).append(f)
        threads += [
            threading.Thread(target=self.send_flow, args=(f,), daemon=True)
            for f in self.spec["flows"]
            if "chain" not in f
        ]
        threads += [
            threading.Thread(target=self.send_serial, args=(c,), daemon=True)
            for c in chains.values()
        ]
        threads += [
            threading.Thread(target=self.ping, args=(p,), daemon=True) for p in self.spec["pings"]
        ]
        threads += [
            threading.Thread(target=self.send_incast, args=(f,), daemon=True)
            for f in self.spec.get("incast_send", [])
        ]
        threads += [
            threading.Thread(target=self.run_incast, args=(g,), daemon=True)
            for g in self.spec.get("incast_recv", [])
        ]
        # Say we listen, then take the common start from the orchestrator:
        # it sends it once every agent has said so, however long a loaded
        # machine took to start them, so no flow finds its receiver not
        # yet listening.
        print("ready", flush=True)
        self.t0 = float(sys.stdin.readline())
        self.end = self.t0 + self.spec["duration"]
        for t in threads:
            t.start()
        for t in threads + self.receivers:
            t.join(timeout=max(0.0, self.end + 2.0 - time.monotonic()))
        with self.lock:
            return {
                "host": me,
                "received": {str(k): v for k, v in self.received.items()},
                "sent": {str(k): v for k, v in self.sent.items()},
                "rtt": self.rtts,
                "incast": {str(g): v["rounds"] for g, v in self.groups.items()},
                "errors": self.errors,
            }


def _checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``data``."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def _stamp(ancillary: list[tuple[int, int, bytes]]) -> float | None:
    """The software timestamp (seconds) among a message's control data."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING:
            sec, nsec = struct.unpack_from("qq", data)
            return sec + nsec * 1e-9
    return None


def _drain_errqueue(sock: socket.socket) -> list[tuple[int, float]]:
    """(send count, transmit time) of every transmit timestamp waiting."""
    out = []
    while True:
        try:
            _, ancillary, _, _ = sock.recvmsg(64, 512, socket.MSG_ERRQUEUE)
        except (BlockingIOError, InterruptedError):
            return out
        stamp = _stamp(ancillary)
        for level, kind, data in ancillary:
            if level == socket.IPPROTO_IP and kind == IP_RECVERR and stamp is not None:
                err = EXTENDED_ERR.unpack_from(data)
                if err[1] == SO_EE_ORIGIN_TIMESTAMPING:
                    out.append((err[6], stamp))


def _drain_replies(sock: socket.socket, ident: int) -> list[tuple[int, float]]:
    """(sequence, receive time) of every echo reply to ``ident`` waiting."""
    out = []
    while True:
        try:
            data, ancillary, _, _ = sock.recvmsg(2048, 512)
        except (BlockingIOError, InterruptedError):
            return out
        offset = (data[0] & 15) * 4
        if len(data) < offset + ICMP.size:
            continue
        kind, _, _, who, seq = ICMP.unpack_from(data, offset)
        stamp = _stamp(ancillary)
        if kind == ICMP_ECHOREPLY and who == ident and stamp is not None:
            out.append((seq, stamp))


def main() -> int:
    spec_path, out_path = sys.argv[1], sys.argv[2]
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    result = Agent(spec).run()
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
