//! A raw AF_PACKET socket bound to one switch-side veth: every frame the
//! host sends arrives here whole, and frames written here go to the host.
//!
//! Each port has two: one the loop receives on, one the sender thread
//! (`txring`) writes to. Plain non-blocking recv/send, one frame per call. A receive
//! ring (PACKET_RX_RING / TPACKET_V3) or AF_XDP would take frames in
//! batches without a copy per frame and without a call per frame; at the
//! rates measured here (docs/testbed.md) the calls are not what
//! limits the switch, so the simpler form came first.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

pub struct PacketSocket {
    fd: RawFd,
    pub ifname: String,
}

fn check(r: libc::c_int, what: &str, ifname: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what} on {ifname}: {e}")))
    } else {
        Ok(r)
    }
}

fn set_int(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
    what: &str,
    ifname: &str,
) -> io::Result<()> {
    // SAFETY: `v` outlives the call and its size is passed with it.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    check(r, what, ifname).map(|_| ())
}

impl PacketSocket {
    /// Open a socket on interface `ifname` (of the current network
    /// namespace). `receive`: it takes every frame arriving there and none
    /// that this or any other socket sends out of it; otherwise it only
    /// sends (protocol 0: the kernel hands it nothing).
    pub fn open(ifname: &str, receive: bool) -> io::Result<PacketSocket> {
        let name = CString::new(ifname).map_err(|_| io::Error::other("interface name with a NUL byte"))?;
        // SAFETY: a plain C string that lives through the call.
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if index == 0 {
            return Err(io::Error::other(format!("no interface {ifname}: {}", io::Error::last_os_error())));
        }
        let proto = if receive { (libc::ETH_P_ALL as u16).to_be() } else { 0 };
        // SAFETY: socket(2) with constant arguments.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, proto as libc::c_int) };
        let fd = check(fd, "socket(AF_PACKET)", ifname)?;
        let sock = PacketSocket { fd, ifname: ifname.to_string() };
        // Frames we send would otherwise come back to us as PACKET_OUTGOING.
        if receive {
            set_int(fd, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING", ifname)?;
        }
        // Straight to the driver: the port's queue is ours, not the kernel's.
        set_int(fd, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS", ifname)?;
        // Room for bursts that arrive while the loop serves other ports.
        set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, 4 << 20, "SO_RCVBUF", ifname)?;
        // SAFETY: an all-zero sockaddr_ll is valid; the fields are set below.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = proto;
        addr.sll_ifindex = index as i32;
        // SAFETY: `addr` is a sockaddr_ll of the size given.
        let r = unsafe {
            libc::bind(
                fd,
                (&addr as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        check(r, "bind", ifname)?;
        Ok(sock)
    }

    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// Receive one frame into `buf`: Ok(Some(len)) with its full length
    /// (larger than `buf` when it did not fit: the caller drops it),
    /// Ok(None) when none is waiting.
    #[inline]
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::recv(self.fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_TRUNC) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
            _ => Err(io::Error::new(e.kind(), format!("recv on {}: {e}", self.ifname))),
        }
    }

    /// Send one frame; false when the kernel refused it for now (its
    /// buffers full), which the caller counts as a drop.
    #[inline]
    pub fn send(&self, frame: &[u8]) -> io::Result<bool> {
        // SAFETY: `frame` is valid for reads of its length.
        let n = unsafe { libc::send(self.fd, frame.as_ptr().cast(), frame.len(), 0) };
        if n >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => Ok(false),
            _ => Err(io::Error::new(e.kind(), format!("send on {}: {e}", self.ifname))),
        }
    }
}

impl PacketSocket {
    /// Frames the kernel dropped before this socket read them (its receive
    /// buffer was full: the switch fell behind), since the last call.
    pub fn kernel_drops(&self) -> io::Result<u64> {
        let mut st = libc::tpacket_stats { tp_packets: 0, tp_drops: 0 };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: `st` and `len` are valid for the kernel to fill.
        let r = unsafe {
            libc::getsockopt(
                self.fd,
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut st as *mut libc::tpacket_stats).cast(),
                &mut len,
            )
        };
        check(r, "PACKET_STATISTICS", &self.ifname)?;
        Ok(st.tp_drops as u64)
    }
}

impl Drop for PacketSocket {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::close(self.fd) };
    }
}
